/**
 * Turning one oversized tool result into an artifact plus a stub. No Pi imports: the adapter passes
 * the event's fields, the store and (when summaries are on) a summarizer.
 */
import { createHash } from "node:crypto";
import { isAbsolute, join, relative, resolve } from "node:path";
import { configuredSurface, type HeadroomConfig, type SurfaceOverrides } from "../shared/host/config.ts";
import { headroomDetails, isProjected } from "../shared/host/details.ts";
import type { CallUsage } from "../shared/host/model-usage.ts";
import { logScanLines, projectLog } from "../shared/projection/log.ts";
import { type ArtifactRef, type MeasuredText, measureText, project } from "../shared/projection/projection.ts";
import type { ArtifactStore, PutFailure, PutResult } from "../shared/store/artifact-store.ts";
import { SURFACES, type SurfaceBudget } from "../shared/surfaces.ts";
import { contentText } from "../shared/text/content.ts";
import {
	DEFAULT_NOTABLE_LINES,
	type DecidedLines,
	type NotableScan,
	scanNotable,
	scanNotableAt,
} from "../shared/text/notable.ts";
import { decideAhead } from "../shared/text/notable-parallel.ts";
import { utf8ByteLength } from "../shared/text/utf8.ts";
import { summaryDisagrees } from "./agreement.ts";
import { classifyTool, type OutputClass } from "./classify.ts";
import { buildExcerpt } from "./excerpt.ts";
import {
	type FullOutputFailure,
	LARGE_OUTPUT_BYTES,
	LargeOutputReader,
	locateFullOutput,
	openFullOutput,
	readOpenedOutput,
	trailingStatus,
	wasTruncated,
} from "./full-output.ts";
import {
	ARGS_NOT_STORED,
	EXCERPT_LABEL,
	partialOutputNote,
	SUMMARY_DISAGREES_NOTE,
	summaryCutMarker,
	summaryFailedNote,
	summaryLabel,
} from "./prompt.ts";
import { artifactId, isStub, renderStub, stubOverhead } from "./stub.ts";
import type { SummaryOutcome, SummaryRequest } from "./summary.ts";

export type ToolArtifactsConfig = HeadroomConfig["toolArtifacts"] & {
	/** The user's by-name surface overrides (the top-level `surfaces` section); they win over the alias keys. */
	surfaces?: SurfaceOverrides;
};

/** The parts of a `tool_result` event this module reads. */
export interface ToolResultFacts {
	toolName: string;
	toolCallId: string;
	input: Record<string, unknown>;
	content: unknown;
	details: unknown;
	isError: boolean;
}

export type { HeadroomDetails } from "../shared/host/details.ts";

/** Artifact store kind of tool outputs. */
export const TOOL_OUTPUT_KIND = "tool-outputs" as const;

/** The user's stub limits: the alias keys toolArtifacts.stubMaxBytes/Lines, under by-name `surfaces` entries. */
const stubAlias = (config: ToolArtifactsConfig) => ({ maxBytes: config.stubMaxBytes, maxLines: config.stubMaxLines });

/** The stub's surface for an output kind, with the user's limits. */
export function stubSurface(kind: OutputClass, config: ToolArtifactsConfig): SurfaceBudget {
	return configuredSurface(`toolArtifacts.stub.${kind}`, stubAlias(config), config.surfaces);
}

/** Every output kind, in the table's order. */
const OUTPUT_KINDS: readonly OutputClass[] = ["command", "search", "listing", "structured", "web", "file", "unknown"];

/**
 * Characters the per-turn cap assumes one stub takes: the largest stub surface's byte limit (a command stub's with
 * the growth of a failing log, `toolArtifacts.stubOverflow`), with a summary's part beside the excerpt
 * (`toolArtifacts.summaryBeside`) when summaries are on, as the user configured them (a stub's UTF-16 length
 * never exceeds its UTF-8 bytes, so the figure is an upper bound).
 */
export function turnStubChars(config: ToolArtifactsConfig): number {
	const overflow = configuredSurface("toolArtifacts.stubOverflow", {}, config.surfaces).maxBytes;
	const summaries = config.summary.enabled;
	const excerpt = Math.max(
		...OUTPUT_KINDS.map((kind) => stubSurface(kind, config).maxBytes + (kind === "command" ? overflow : 0)),
		summaries ? configuredSurface("toolArtifacts.summary", stubAlias(config), config.surfaces).maxBytes : 0,
	);
	return excerpt + (summaries ? configuredSurface("toolArtifacts.summaryBeside", {}, config.surfaces).maxBytes : 0);
}

/** Pure: the text parts of a tool result's content, joined (its images stay beside the stub, not in it). */
export function resultText(content: unknown): string {
	return contentText(content, "omitted");
}

/** Pure: the non-text parts (images), kept beside the stub. */
export function nonTextParts(content: unknown): unknown[] {
	return Array.isArray(content)
		? content.filter((part) => !(part && typeof part === "object" && part.type === "text"))
		: [];
}

/** Pure: true when the result must pass through untouched (already projected by us, or already a stub). */
export function isPassThrough(text: string, details: unknown): boolean {
	return isProjected(details) || isStub(text);
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

/** Pure: the bytes of the complete output a result Pi cut states in its details (`truncation.totalBytes`), else 0. */
export function cutOutputBytes(details: unknown): number {
	const truncation =
		details && typeof details === "object" ? (details as { truncation?: unknown }).truncation : undefined;
	if (!truncation || typeof truncation !== "object") return 0;
	const t = truncation as { truncated?: unknown; totalBytes?: unknown };
	return t.truncated === true && typeof t.totalBytes === "number" && Number.isFinite(t.totalBytes) ? t.totalBytes : 0;
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
	/** A large output already stored in chunks from Pi's file (`full` is then its bounded view). */
	stored?: PutResult | PutFailure;
}

/** The output text of the result and where the complete output came from (Pi's file read off the main thread). */
export async function completeOutput(
	fact: ToolResultFacts,
	text: string,
	store?: ArtifactStore,
): Promise<CompleteOutput> {
	const location = locateFullOutput(text, fact.details);
	const status = trailingStatus(text);
	const notes = status ? [status] : [];
	const partial = (failure: FullOutputFailure) => ({
		full: text,
		notes: [...notes, partialOutputNote(Buffer.byteLength(text, "utf8"), failure)],
	});
	if (location) {
		const opened = await openFullOutput(location);
		if (!opened.ok) return partial(opened.failure);
		// A large output is never held whole: stored in chunks as it is read, shown through a bounded view.
		if (store && opened.opened.size > LARGE_OUTPUT_BYTES) {
			const reader = new LargeOutputReader(opened.opened);
			try {
				const stored = await store.putChunks(TOOL_OUTPUT_KIND, reader.chunks(), reader.accept);
				if (reader.refused) return partial({ code: "mismatch" });
				return { full: reader.view(), notes, fullOutputFile: location.path, stored };
			} finally {
				await opened.opened.handle.close().catch(() => undefined);
			}
		}
		const read = await readOpenedOutput(opened.opened);
		if (read.ok) return { full: read.text, notes, fullOutputFile: location.path };
		return partial(read.failure);
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
	const complete = await completeOutput(fact, text, deps.store);
	const { full, notes } = complete;
	// The store encodes, hashes and writes the output in this call and makes it durable in the thread pool while
	// this thread classifies, measures and scans it: only the excerpt's footer needs the artifact's name. A large
	// log's key lines are decided on a second thread meanwhile, fed between the store's chunks, and this thread
	// decides the rest (notable-parallel.ts): the scans below only read the decisions.
	let written: number | undefined;
	const kind = classifyTool(fact.toolName, full, deps.config.toolClasses);
	// An output stored already (in chunks, from Pi's full-output file) is scanned as a stand-in whose middle is
	// filler: nothing to overlap, little to decide.
	const ahead = !complete.stored && (kind === "command" || deps.summarize) ? decideAhead(full) : undefined;
	const putting: Promise<PutResult | PutFailure> = complete.stored
		? Promise.resolve(complete.stored)
		: deps.store
				.startPut(
					TOOL_OUTPUT_KIND,
					full,
					(bytes) => {
						written = bytes;
					},
					ahead?.feed,
				)
				.catch((error: unknown) => ({ ok: false as const, error: String(error) }));
	const decided = await ahead?.finish();
	// While the store syncs: the excerpt's scan (no summary: the excerpt is the whole body), or the scan of the
	// summary model's input, which the agreement check then reuses (the same limits: one scan, not two). The
	// output is measured once (its UTF-8 size is what the store wrote) for the header and every projection of it
	// below. The excerpt's scan limits depend on the header's line count only through its digits: when the fewest
	// and the most lines the output can have give the same limits, the scan runs first and counts the lines as it
	// walks them (measureText then makes no pass of its own); else the output is measured first.
	const bytes = written ?? utf8ByteLength(full);
	const limitsAt = (lines: number) => {
		const sized = { bytes, lines, lastLineEmpty: full.endsWith("\n") };
		return deps.summarize
			? excerptLines(fact, full, kind, sized, notes, deps)
			: [earlyLines(fact, full, kind, sized, notes, deps)];
	};
	const fewest = limitsAt(1);
	const most = limitsAt(full.length + 1);
	const counting = fewest.every((m, i) => m !== undefined && m === most[i]);
	let measured = counting ? undefined : measureText(full, bytes);
	const limits = measured ? limitsAt(measured.lines) : fewest;
	let lines: number | undefined;
	const counted = measured
		? undefined
		: (n: number) => {
				lines = n;
			};
	const early = deps.summarize ? undefined : earlyScan(full, limits[0], counted, decided);
	const input = deps.summarize ? summaryInputPlan(full, kind, deps.config, limits, counted, decided) : undefined;
	measured ??= measureText(full, bytes, lines);
	const sizes = measure(full, measured);
	const put = await putting;
	if (!put.ok) return unstoredStub(fact, complete, put.error, deps.config);
	const ref: ArtifactRef = { ok: true, path: put.path, sha256: put.sha256 };
	const id = artifactId(put.sha256);
	const base = { id, tool: fact.toolName, ...sizes, path: put.path };

	let usage: CallUsage | undefined;
	/** The model's summary with its label, when it answered: it goes beside the excerpt, never instead of it. */
	let summary: { label: string; text: string } | undefined;
	/** What the stub says about the summary (why there is none; that it disagrees with the scan): its part too. */
	const summaryNotes: string[] = [];
	if (deps.summarize && input) {
		// Head + the notable lines of the WHOLE output + tail, so the cheap model sees what failed wherever it is.
		const shown = projectLog(full, input.surface, { ...input.options, stored: ref, scan: input.scan, measured });
		const outcome = await deps.summarize({
			kind,
			tool: fact.toolName,
			args: describeArgs(fact.input, configuredSurface("toolArtifacts.args", {}, deps.config.surfaces)),
			output: shown.text,
			cut: shown.truncated,
			notable: shown.notable.length > 0,
		});
		if (outcome.ok) {
			usage = outcome.usage;
			summary = { label: summaryLabel(outcome.model), text: outcome.text };
			// The scan's verbatim failures against the summary's words: a summary that mentions none is flagged.
			if (kind === "command" && summaryDisagrees(outcome.text, agreementScan(full, input, decided).lines)) {
				summaryNotes.push(SUMMARY_DISAGREES_NOTE);
			}
		} else summaryNotes.push(summaryFailedNote(outcome.reason));
	} else if (deps.summaryUnavailable) summaryNotes.push(summaryFailedNote(deps.summaryUnavailable));
	// The body is always the verbatim excerpt (notable lines, head, tail), laid out in the stub's own limits as if
	// there were no summary model at all: the summary (after the excerpt) and the notes about it are a part of
	// their own, bounded by the summaryBeside surface and added to the stub, so they never take the excerpt's bytes.
	const surface = stubSurface(kind, deps.config);
	const whole = summary
		? configuredSurface("toolArtifacts.summary", stubAlias(deps.config), deps.config.surfaces)
		: surface;
	const room = excerptRoom(whole, base, notes, kind, deps.config);
	const after = summary ? summaryPart(summary, summaryNotes, deps.config) : "";
	const bodyNotes = [...notes, ...summaryNotes];
	// The scan made while the store synced is the excerpt's when it was made at the same limits: without a summary
	// model the early scan (the name the stub shows has the length it assumed); with one, the input's pass also
	// scanned at the excerpt's limits whether the model answers or not (excerptLines). Else the excerpt scans again.
	const made = early ? [early] : (input?.excerptScans ?? []);
	const wanted = logScanLines(full, surface, room);
	const scan = made.find((m) => m.maxLines === wanted)?.scan;
	const body = excerptOf(kind, surface, fact, full, room, ref, scan, measured) + after;
	const stub = renderStub({ ...base, notes: bodyNotes, label: EXCERPT_LABEL, body });
	const headroom = headroomDetails({ artifacts: [put.path], ...(usage ? { usage } : {}) });
	return { ...stubResult(fact, stub, headroom), id, path: put.path, kind, summarized: summary !== undefined };
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
	const measured = measureText(full);
	const base = { id: "", tool: fact.toolName, ...measure(full, measured), path: "", notStored };
	const surface = stubSurface(kind, config);
	const room = budget(surface, { ...base, notes, label: EXCERPT_LABEL });
	// The excerpt's own footer points at Pi's file when there is one (its text is `full`), else says not saved.
	const ref: ArtifactRef = fullOutputFile
		? { ok: true, path: fullOutputFile, sha256: createHash("sha256").update(full).digest("hex") }
		: { ok: false, error: reason };
	const body = excerptOf(kind, surface, fact, full, room, ref, undefined, measured);
	const stub = renderStub({ ...base, notes, label: EXCERPT_LABEL, body });
	const headroom = headroomDetails({
		artifacts: fullOutputFile ? [fullOutputFile] : [],
		notStored: reason,
	});
	return { ...stubResult(fact, stub, headroom), kind, summarized: false, notStored: reason };
}

/** What replaces the tool's result: the stub as its text, the result's other parts, its details with `headroom`. */
function stubResult(
	fact: ToolResultFacts,
	stub: string,
	headroom: ReturnType<typeof headroomDetails>,
): Pick<StubResult, "text" | "content" | "details"> {
	return {
		text: stub,
		content: [{ type: "text", text: stub }, ...nonTextParts(fact.content)],
		details: { ...previousDetails(fact), headroom },
	};
}

/**
 * The stub's summary part after the excerpt: the summary's label and its text, cut so that they and the notes
 * about the summary (`notes`, shown above the excerpt) fit the `toolArtifacts.summaryBeside` surface together.
 * Starts with "\n" (it follows the excerpt's last line).
 */
function summaryPart(summary: { label: string; text: string }, notes: readonly string[], config: ToolArtifactsConfig) {
	const beside = configuredSurface("toolArtifacts.summaryBeside", {}, config.surfaces);
	const fixed = [...notes, summary.label];
	const fixedBytes = fixed.reduce((sum, line) => sum + Buffer.byteLength(line, "utf8") + 1, 0);
	// The summary itself is not stored (the artifact holds the verbatim output): a marker, no footer.
	const cut = project(summary.text, beside, {
		maxBytes: Math.max(1, beside.maxBytes - fixedBytes),
		maxLines: Math.max(1, beside.maxLines - fixed.length),
		marker: summaryCutMarker,
		footer: false,
	}).text;
	return `\n${summary.label}\n${cut}`;
}

/**
 * What a command stub may add, all of it to its notable section, when the log's scan found failures and the
 * section at the stub's limits leaves some out (`toolArtifacts.stubOverflow`); undefined for other kinds.
 */
function overflowOf(
	kind: OutputClass,
	config: ToolArtifactsConfig,
): { maxBytes: number; maxLines: number } | undefined {
	if (kind !== "command") return undefined;
	const { maxBytes, maxLines } = configuredSurface("toolArtifacts.stubOverflow", {}, config.surfaces);
	return { maxBytes, maxLines };
}

/** A content-addressed name's place holder: a SHA-256 hex has 64 characters, whatever the content. */
const UNKNOWN_SHA256 = "0".repeat(64);

/**
 * The `maxLines` a command's excerpt scans with when it is the whole body (no summary model), computed before the
 * artifact has its name: the header and footer it leaves room for name an artifact id and path of the same length
 * as the real ones. Undefined when the excerpt would not scan.
 */
function earlyLines(
	fact: ToolResultFacts,
	full: string,
	kind: OutputClass,
	sizes: ReturnType<typeof measure>,
	notes: readonly string[],
	deps: StubDeps,
): number | undefined {
	if (kind !== "command") return undefined;
	const surface = stubSurface(kind, deps.config);
	return logScanLines(
		full,
		surface,
		excerptRoom(surface, placeholderBase(fact, sizes, deps), notes, kind, deps.config),
	);
}

/** The excerpt's scan at `maxLines` (earlyLines), made while the store syncs; `counted`: the scan's line count. */
function earlyScan(
	full: string,
	maxLines: number | undefined,
	counted?: (lines: number) => void,
	decided?: DecidedLines,
): { maxLines: number; scan: NotableScan } | undefined {
	return maxLines === undefined ? undefined : { maxLines, scan: scanNotable(full, { maxLines, counted, decided }) };
}

/** The summary model's input: its surface, projectLog's options (but the artifact) and the scan made for it. */
interface SummaryInputPlan {
	surface: SurfaceBudget;
	options: { headShare: number | undefined; section: "notable.summaryInput" };
	/** The scan of `full` at the limits projectLog scans the input with; undefined when it would not scan. */
	scan?: NotableScan;
	/** Its `maxLines`. */
	maxLines?: number;
	/** The same pass's scans at the limits the excerpt may have beside the summary (excerptLines), the input's too. */
	excerptScans?: { maxLines: number; scan: NotableScan }[];
}

/**
 * The summary input's surface and options, and its notable-line scan, made before the artifact has its name:
 * the input's scan limits do not depend on it (the section takes its share of the surface's own limits).
 * `counted`: called with the output's line count when the pass is made (the stub's header needs it).
 */
export function summaryInputPlan(
	full: string,
	kind: OutputClass,
	config: ToolArtifactsConfig,
	excerptLines: readonly (number | undefined)[] = [],
	counted?: (lines: number) => void,
	decided?: DecidedLines,
): SummaryInputPlan {
	// summary.maxInputChars is the surface's byte limit (the key keeps its old name).
	const surface = configuredSurface(
		"toolArtifacts.summaryInput",
		{ maxBytes: config.summary.maxInputChars },
		config.surfaces,
	);
	// No head share of its own: the kind's stub share, as configured.
	const headShare = surface.headShare ?? stubSurface(kind, config).headShare;
	const options = { headShare, section: "notable.summaryInput" as const };
	const maxLines = logScanLines(full, surface, options);
	if (maxLines === undefined) return { surface, options };
	// One pass for the input and the excerpt's predicted limits (scanNotableAt: each exactly its own scan).
	const more = [...new Set(excerptLines)].filter((m): m is number => m !== undefined && m !== maxLines);
	const [scan, ...others] = scanNotableAt(full, [maxLines, ...more], { counted, decided });
	return {
		surface,
		options,
		maxLines,
		scan,
		excerptScans: [{ maxLines, scan }, ...more.map((m, i) => ({ maxLines: m, scan: others[i] }))],
	};
}

/**
 * The `maxLines` the excerpt of a command's log scans with when a summary model is on: its room is the stub's
 * limits less its fixed lines, whether the model answers (the `toolArtifacts.summary` surface) or not (the stub's
 * own), never less what the summary takes (buildStub). Made before the artifact has its name, as earlyScan.
 */
function excerptLines(
	fact: ToolResultFacts,
	full: string,
	kind: OutputClass,
	sizes: ReturnType<typeof measure>,
	notes: readonly string[],
	deps: StubDeps,
): (number | undefined)[] {
	if (kind !== "command") return [];
	const surface = stubSurface(kind, deps.config);
	const answered = configuredSurface("toolArtifacts.summary", stubAlias(deps.config), deps.config.surfaces);
	const base = placeholderBase(fact, sizes, deps);
	return [answered, surface].map((whole) =>
		logScanLines(full, surface, excerptRoom(whole, base, notes, kind, deps.config)),
	);
}

/**
 * The excerpt's room in `whole`: its limits less the stub's fixed lines, plus what an overflowing section may grow
 * by. The notes about a summary are not the excerpt's (see buildStub): the room counts the output's notes only.
 * buildStub and the scans made before the artifact has its name (earlyScan, excerptLines) all take it from here,
 * so a scan made early is made at the limits the excerpt will have.
 */
function excerptRoom(
	whole: SurfaceBudget,
	base: Omit<Parameters<typeof stubOverhead>[0], "notes" | "label">,
	notes: readonly string[],
	kind: OutputClass,
	config: ToolArtifactsConfig,
): { maxBytes: number; maxLines: number; grow: ReturnType<typeof overflowOf> } {
	return { ...budget(whole, { ...base, notes: [...notes], label: EXCERPT_LABEL }), grow: overflowOf(kind, config) };
}

/** The header's facts before the artifact has its name: an id and a path of the same length as the real ones. */
function placeholderBase(fact: ToolResultFacts, sizes: ReturnType<typeof measure>, deps: StubDeps) {
	const path = join(deps.store.dirFor(TOOL_OUTPUT_KIND), `${UNKNOWN_SHA256}.txt`);
	return { id: artifactId(UNKNOWN_SHA256), tool: fact.toolName, ...sizes, path };
}

/**
 * The scan the summary is checked against (scanNotable's default limits): the input's own scan when it was made
 * at those limits (the default surfaces: the notable section of the input has DEFAULT_NOTABLE_LINES lines), else
 * a scan of its own.
 */
export function agreementScan(full: string, input: SummaryInputPlan | undefined, decided?: DecidedLines): NotableScan {
	return input?.scan && input.maxLines === DEFAULT_NOTABLE_LINES ? input.scan : scanNotable(full, { decided });
}

/**
 * The stub's type-aware excerpt of `full` within `room`, its footer pointing at `artifact` (or saying why not);
 * `scan`: a command log's notable-line scan already made at these limits; `measured`: `full`'s sizes.
 */
function excerptOf(
	kind: OutputClass,
	surface: SurfaceBudget,
	fact: ToolResultFacts,
	full: string,
	room: { maxBytes: number; maxLines: number; grow?: { maxBytes: number; maxLines: number } },
	artifact: ArtifactRef,
	scan?: NotableScan,
	measured?: MeasuredText,
): string {
	return buildExcerpt({ kind, surface, text: full, args: fact.input, ...room, artifact, scan, measured });
}

/** Bytes and lines (as Pi's read counts them) of an output, for the stub's header. */
function measure(full: string, measured: MeasuredText): { bytes: number; lines: number; lastLineEmpty: boolean } {
	return { bytes: measured.bytes, lines: measured.lines, lastLineEmpty: full.endsWith("\n") };
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
	surface: SurfaceBudget,
	parts: Parameters<typeof stubOverhead>[0],
): { maxBytes: number; maxLines: number } {
	const overhead = stubOverhead(parts);
	return {
		maxBytes: Math.max(1, surface.maxBytes - overhead.bytes),
		maxLines: Math.max(1, surface.maxLines - overhead.lines),
	};
}

/** Pure: the call's arguments as one JSON line for the summary prompt (bounded by `surface`, as configured). */
export function describeArgs(
	input: Record<string, unknown>,
	surface: SurfaceBudget = SURFACES["toolArtifacts.args"],
): string {
	let json: string;
	try {
		json = JSON.stringify(input ?? {});
	} catch {
		json = "{}";
	}
	return project(json, surface, { notSavedReason: ARGS_NOT_STORED }).text;
}
