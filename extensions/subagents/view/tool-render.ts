/**
 * How the tools' calls and results and the delivered results are drawn in Pi's transcript: a call in one
 * line, a result as rows drawn from the children's current state on every frame (live-rows.ts), a
 * delivered result collapsed to its rows with the key that expands it.
 */
import { keyText } from "@mariozechner/pi-coding-agent";
import type { ChildRow } from "../domain/records.ts";
import { type LiveChildren, LiveResultComponent } from "./live-rows.ts";
import { callText, deliveredComponent, paintFor, textComponent } from "./render.ts";

type Theme = { fg(c: string, t: string): string };

/** Pi's default key for expanding tool output (docs/keybindings.md, `app.tools.expand`). */
const DEFAULT_EXPAND_KEY = "ctrl+o";

/**
 * The key bound to expanding tool output. Pi 1.x runs from a bundle, so the module an extension imports
 * holds its own keybinding registry without the app's bindings: keyText is then empty, and the
 * documented default is the best hint there is.
 */
export function expandKey(): string {
	try {
		return keyText("app.tools.expand") || DEFAULT_EXPAND_KEY;
	} catch {
		return DEFAULT_EXPAND_KEY;
	}
}

/** renderCall and renderResult of every subagent_* tool. */
export function toolRenderers(children: LiveChildren) {
	return {
		renderCall(tool: string) {
			return (args: unknown, theme: Theme) =>
				textComponent(callText(tool, (args ?? {}) as Record<string, unknown>, paintFor(theme)));
		},
		renderResult(
			result: { content?: Array<{ type: string; text?: string }>; details?: unknown },
			options: { expanded?: boolean },
			theme: Theme,
		) {
			const text = (result.content ?? []).map((c) => c.text ?? "").join("");
			const rows = ((result.details as { rows?: ChildRow[] } | undefined)?.rows ?? []) as ChildRow[];
			// Drawn from the children's current state on every frame: rows never keep saying "starting".
			return new LiveResultComponent(rows, text, Boolean(options?.expanded), paintFor(theme), children);
		},
	};
}

/** The renderer of a delivered result message (its rows; the full text expanded). */
export function renderDelivered(
	message: { content: unknown; details?: unknown },
	options: { expanded: boolean },
	theme: Theme,
) {
	const rows = ((message.details as { rows?: ChildRow[] } | undefined)?.rows ?? []) as ChildRow[];
	const content = typeof message.content === "string" ? message.content : "";
	return deliveredComponent(rows, content, { expanded: options.expanded, expandKey: expandKey() }, theme);
}
