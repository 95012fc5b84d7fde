/**
 * Turning one oversized tool result into an artifact plus a stub. No Pi imports: the adapter passes
 * the event's fields, the store and (when summaries are on) a summarizer.
 */
import { createHash } from "node:crypto";
import { isAbsolute, relative, resolve } from "node:path";
import type { HeadroomConfig } from "../shared/host/config.ts";
import type { CallUsage } from "../shared/host/model-usage.ts";
import { type ArtifactRef, projectText } from "../shared/projection/projection.ts";
import type { ArtifactStore } from "../shared/store/artifact-store.ts";
import { SURFACES } from "../shared/surfaces.ts";
import { CLASS_HEAD_SHARE, classifyTool, type OutputClass } from "./classify.ts";
import { buildExcerpt, projectSummary } from "./excerpt.ts";
import { locateFullOutput, readFullOutput, trailingStatus, wasTruncated } from "./full-output.ts";
import { ARGS_NOT_STORED, EXCERPT_LABEL, partialOutputNote, summaryFailedNote, summaryLabel } from "./prompt.ts";
import { artifactId, isStub, renderStub, stubOverhead } from "./stub.ts";
import type { SummaryOutcome, SummaryRequest } from "./summary.ts";

export type ToolArtifactsConfig = HeadroomConfig["toolArtifacts"];

/** The parts of a `tool_result` event this module reads. */
export interface ToolResultFacts {
	toolName: string;
	toolCallId: string;
	input: Record<string, unknown>;
	content: unknown;
	details: unknown;
	isError: boolean;
}

/** The shape `details.headroom` has on results our extensions made. */
export interface HeadroomDetails {
	/** The result went through the projection (or is a stub): never shorten it again. */
	projected: true;
	/** Absolute paths of the artifacts it points to. */
	artifacts?: string[];
	/** Why the full text could not be stored, when it could not (the text says so too). */
	notStored?: string;
	/** Tokens and cost of the summary call that wrote the stub's body (absent for an excerpt). */
	usage?: CallUsage;
}

/** Artifact store kind of tool outputs. */
export const TOOL_OUTPUT_KIND = "tool-outputs" as const;

/** Lines per summary input: effectively unbounded; the byte cap (summary.maxInputChars) decides. */
const SUMMARY_INPUT_MAX_LINES = SURFACES["toolArtifacts.summaryInput"].maxLines;

/** Pure: the text parts of a tool result's content, joined. */
export function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((part) => part && typeof part === "object" && part.type === "text" && typeof part.text === "string")
		.map((part) => part.text as string)
		.join("\n");
}

/** Pure: the non-text parts (images), kept beside the stub. */
export function nonTextParts(content: unknown): unknown[] {
	return Array.isArray(content)
		? content.filter((part) => !(part && typeof part === "object" && part.type === "text"))
		: [];
}

/** Pure: true when the result must pass through untouched (already projected by us, or already a stub). */
export function isPassThrough(text: string, details: unknown): boolean {
	const headroom =
		details && typeof details === "object" ? (details as { headroom?: { projected?: unknown } }).headroom : undefined;
	return headroom?.projected === true || isStub(text);
}

/**
 * Pure: true for a `read` of a file inside the artifact store. The model is paging an artifact on
 * purpose (Pi's read already bounds the page); turning that page into another artifact would send it
 * in circles.
 */
export function readsStoredArtifact(
	toolName: string,
	input: Record<string, unknown>,
	cwd: string,
	storeRoot: string,
): boolean {
	if (toolName !== "read" || typeof input?.path !== "string") return false;
	const target = resolve(cwd, input.path.replace(/^@/, ""));
	const rel = relative(resolve(storeRoot), target);
	return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** Pure: the threshold in characters for a tool, or false when the tool is switched off. */
export function thresholdFor(tool: string, config: ToolArtifactsConfig): number | false {
	const own = Object.hasOwn(config.perTool, tool) ? config.perTool[tool] : undefined;
	return own === undefined ? config.thresholdChars : own;
}

/** The complete output of a result, as far as it can be had. */
export interface CompleteOutput {
	/** The complete output (Pi's full-output file when bash saved one), else the text the tool returned. */
	full: string;
	/** Notes for the stub: the exit status, and why the complete output is gone when it is. */
	notes: string[];
	/** Pi's full-output file `full` was read from, when it was. */
	fullOutputFile?: string;
}

/** Pure: the output text of the result and where the complete output came from. */
export function completeOutput(fact: ToolResultFacts, text: string): CompleteOutput {
	const location = locateFullOutput(text, fact.details);
	const status = trailingStatus(text);
	const notes = status ? [status] : [];
	if (location) {
		const read = readFullOutput(location);
		if (read.ok) return { full: read.text, notes, fullOutputFile: location.path };
		return { full: text, notes: [...notes, partialOutputNote(Buffer.byteLength(text, "utf8"), read.failure)] };
	}
	if (fact.toolName === "bash" && wasTruncated(text, fact.details)) {
		const failure = { code: "no-file" } as const;
		return { full: text, notes: [...notes, partialOutputNote(Buffer.byteLength(text, "utf8"), failure)] };
	}
	return { full: text, notes: [] };
}

/** What the adapter needs to build a stub. */
export interface StubDeps {
	store: ArtifactStore;
	config: ToolArtifactsConfig;
	/** Absent when summaries are off. */
	summarize?: (request: SummaryRequest) => Promise<SummaryOutcome>;
	/** Set when summaries are on but no model could be chosen (said in the stub). */
	summaryUnavailable?: string;
}

/** A built stub: the output stored, or not (the store failed; the stub says so). */
export type BuiltStub = StoredStub | UnstoredStub;

/** What every stub has. */
interface StubResult {
	/** The stub text. */
	text: string;
	/** The new content (stub first, then any image parts). */
	content: unknown[];
	/** Details to return (the original's fields plus `headroom`). */
	details: Record<string, unknown>;
	/** Kind the output was classified as. */
	kind: OutputClass;
	/** True when the body is a model summary. */
	summarized: boolean;
}

/** A stub whose output is stored as an artifact. */
export interface StoredStub extends StubResult {
	/** Artifact id and path. */
	id: string;
	path: string;
}

/** A stub whose output the store could not keep: it says NOT stored and why, with the excerpt. */
export interface UnstoredStub extends StubResult {
	/** Why the store could not keep the output. */
	notStored: string;
	summarized: false;
}

/**
 * Store the output and build its stub. When the store cannot write (a planted symlink, a full disk,
 * EACCES), the stub says the full output was NOT stored and why, keeps the type-aware excerpt, and
 * points at Pi's full-output file when bash saved one: never a silent pass-through.
 */
export async function buildStub(fact: ToolResultFacts, text: string, deps: StubDeps): Promise<BuiltStub> {
	const complete = completeOutput(fact, text);
	const { full, notes } = complete;
	const put = await deps.store
		.put(TOOL_OUTPUT_KIND, full)
		.catch((error: unknown) => ({ ok: false as const, error: String(error) }));
	if (!put.ok) return unstoredStub(fact, complete, put.error, deps.config);
	const ref: ArtifactRef = { ok: true, path: put.path, sha256: put.sha256 };
	const id = artifactId(put.sha256);
	const kind = classifyTool(fact.toolName, full, deps.config.toolClasses);
	const base = { id, tool: fact.toolName, ...measure(full), path: put.path };

	let label = EXCERPT_LABEL;
	let usage: CallUsage | undefined;
	let body: string | undefined;
	const bodyNotes = [...notes];
	if (deps.summarize) {
		const cap = deps.config.summary.maxInputChars;
		const input = projectText(
			full,
			{ maxBytes: cap, maxLines: SUMMARY_INPUT_MAX_LINES, headShare: CLASS_HEAD_SHARE[kind] },
			ref,
		);
		const outcome = await deps.summarize({
			kind,
			tool: fact.toolName,
			args: describeArgs(fact.input),
			output: input.text,
			cut: input.truncated,
		});
		if (outcome.ok) {
			label = summaryLabel(outcome.model);
			usage = outcome.usage;
			const room = budget(deps.config, { ...base, notes: bodyNotes, label });
			body = projectSummary(outcome.text, room);
		} else bodyNotes.push(summaryFailedNote(outcome.reason));
	} else if (deps.summaryUnavailable) bodyNotes.push(summaryFailedNote(deps.summaryUnavailable));
	if (body === undefined) {
		const room = budget(deps.config, { ...base, notes: bodyNotes, label });
		body = buildExcerpt({
			kind,
			text: full,
			args: fact.input,
			maxBytes: room.maxBytes,
			maxLines: room.maxLines,
			artifact: ref,
		});
	}
	const stub = renderStub({ ...base, notes: bodyNotes, label, body });
	const headroom: HeadroomDetails = { projected: true, artifacts: [put.path], ...(usage ? { usage } : {}) };
	return {
		text: stub,
		content: [{ type: "text", text: stub }, ...nonTextParts(fact.content)],
		details: { ...previousDetails(fact), headroom },
		id,
		path: put.path,
		kind,
		summarized: label !== EXCERPT_LABEL,
	};
}

/**
 * The stub of an output the store could not keep: the type-aware excerpt (of Pi's full-output file
 * when bash saved one, whose omitted lines it then pages with read), framed by a header and a footer
 * that say NOT stored and why. No summary: with nothing stored, verbatim text is what is left.
 */
function unstoredStub(
	fact: ToolResultFacts,
	complete: CompleteOutput,
	reason: string,
	config: ToolArtifactsConfig,
): UnstoredStub {
	const { full, notes, fullOutputFile } = complete;
	const kind = classifyTool(fact.toolName, full, config.toolClasses);
	const notStored = { reason, fullOutputFile };
	const base = { id: "", tool: fact.toolName, ...measure(full), path: "", notStored };
	const room = budget(config, { ...base, notes, label: EXCERPT_LABEL });
	// The excerpt's own footer points at Pi's file when there is one (its text is `full`), else says not saved.
	const ref: ArtifactRef = fullOutputFile
		? { ok: true, path: fullOutputFile, sha256: createHash("sha256").update(full).digest("hex") }
		: { ok: false, error: reason };
	const body = buildExcerpt({
		kind,
		text: full,
		args: fact.input,
		maxBytes: room.maxBytes,
		maxLines: room.maxLines,
		artifact: ref,
	});
	const stub = renderStub({ ...base, notes, label: EXCERPT_LABEL, body });
	const headroom: HeadroomDetails = {
		projected: true,
		artifacts: fullOutputFile ? [fullOutputFile] : [],
		notStored: reason,
	};
	return {
		text: stub,
		content: [{ type: "text", text: stub }, ...nonTextParts(fact.content)],
		details: { ...previousDetails(fact), headroom },
		kind,
		summarized: false,
		notStored: reason,
	};
}

/** Bytes and lines (as Pi's read counts them) of an output, for the stub's header. */
function measure(full: string): { bytes: number; lines: number; lastLineEmpty: boolean } {
	return { bytes: Buffer.byteLength(full, "utf8"), lines: full.split("\n").length, lastLineEmpty: full.endsWith("\n") };
}

/**
 * The result's details without Pi's `truncation`: it described the text the stub replaces; left in,
 * Pi's bash row would still say "showing 2000 of N lines" under a stub that shows far fewer.
 */
function previousDetails(fact: ToolResultFacts): Record<string, unknown> {
	const { truncation: _replaced, ...previous } =
		fact.details && typeof fact.details === "object" ? (fact.details as Record<string, unknown>) : {};
	return previous;
}

/** The body's budget: the stub's limits minus its fixed lines. */
function budget(
	config: ToolArtifactsConfig,
	parts: Parameters<typeof stubOverhead>[0],
): { maxBytes: number; maxLines: number } {
	const overhead = stubOverhead(parts);
	return {
		maxBytes: Math.max(1, config.stubMaxBytes - overhead.bytes),
		maxLines: Math.max(1, config.stubMaxLines - overhead.lines),
	};
}

/** Pure: the call's arguments as one JSON line for the summary prompt (bounded by the primitive). */
export function describeArgs(input: Record<string, unknown>): string {
	let json: string;
	try {
		json = JSON.stringify(input ?? {});
	} catch {
		json = "{}";
	}
	return projectText(json, SURFACES["toolArtifacts.args"], { ok: false, error: ARGS_NOT_STORED }).text;
}
