/**
 * The text of a Pi message's content (a string or an array of parts), as one string. One copy: transcripts,
 * narration, handoff serialization and tool-result stubs all read content the same way.
 */

/**
 * Text parts of `content` joined by "\n". Images are named ("[image]") so nothing vanishes silently,
 * unless `images` is "omitted" (a stub keeps the image parts beside its text). Other parts are skipped.
 */
export function contentText(content: unknown, images: "marked" | "omitted" = "marked"): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const out: string[] = [];
	for (const part of content) {
		if (!part || typeof part !== "object") continue;
		const p = part as { type?: unknown; text?: unknown };
		if (p.type === "text" && typeof p.text === "string") out.push(p.text);
		else if (p.type === "image" && images === "marked") out.push("[image]");
	}
	return out.join("\n");
}
