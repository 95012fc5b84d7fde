/**
 * The one table of budgets: every place that bounds text the model sees is a named surface here, with its
 * limits in UTF-8 bytes and lines of the WHOLE text that place shows (body, omission marker, footer,
 * headers) and the share of the body kept at the head. Change a budget here and nowhere else; a new
 * place that bounds model-facing text adds its entry here (test/unit/surfaces.test.ts keeps the table of
 * docs/configuration.md and the code in step with it).
 *
 * Pure data at the ground of `extensions/shared/`: this module imports nothing.
 */

/** One named surface. */
export interface SurfaceBudget {
	/** UTF-8 bytes of everything the model sees on this surface; for a batch surface, of one result in it. */
	readonly maxBytes: number;
	/** Lines (as Pi's read counts them: `text.split("\n").length`) of everything the model sees there. */
	readonly maxLines: number;
	/** Share of the body budget kept at the head, 0..1; absent: the configured `projection.headShare`. */
	readonly headShare?: number;
	/** UTF-8 bytes of a whole batch of results (batch surfaces only: results, headers, separators). */
	readonly batchBytes?: number;
	/**
	 * Set when the byte limit is decided per call (from the context window or a water level): `maxBytes`
	 * is then only the ceiling, and `maxLines` is derived from the call's bytes at this many bytes a line.
	 */
	readonly bytesPerLine?: number;
	/**
	 * A clipped surface (a title, a brief, a reason, a list): the text is cut to its longest prefix within
	 * both limits and marked, with no omission marker line or footer; below the projection's minimum window.
	 * A list (`project(items, …)`) on it shows whole items and then "… and N more"; every entry, items and
	 * that marker, counts against maxLines, so "20 items, then a count of the rest" is maxLines 21.
	 */
	readonly clip?: boolean;
	/**
	 * Not overridable by name, though not clipped: a list cap laid out by its caller, a limit that refuses
	 * input, or a display-only view. Clipped surfaces are fixed too (see `overridableFields`).
	 */
	readonly fixed?: boolean;
	/** What the surface bounds, in one line (shown in the budget table of docs/configuration.md). */
	readonly doc: string;
}

const KIB = 1024;
/** Ceiling of a surface whose byte limit is decided per call. */
const PER_CALL = Number.MAX_SAFE_INTEGER;

function freezeEntries<T extends Record<string, SurfaceBudget>>(table: T): Readonly<T> {
	for (const entry of Object.values(table)) Object.freeze(entry);
	return Object.freeze(table);
}

/** Every budget of the package, by name. */
export const SURFACES = freezeEntries({
	// subagents: results of children, batched (see budget/batch.ts)
	"subagents.autoDelivery": {
		maxBytes: 24 * KIB,
		maxLines: 600,
		batchBytes: 48 * KIB,
		doc: "one finished child's result delivered automatically; the batch of them",
	},
	"subagents.wait": {
		maxBytes: 16 * KIB,
		maxLines: 400,
		batchBytes: 48 * KIB,
		doc: "one child's result returned by subagent_wait; the batch of them",
	},
	"subagents.handover": {
		maxBytes: 24 * KIB,
		maxLines: 600,
		batchBytes: 64 * KIB,
		doc: "one input's result opening the task of a child spawned with after (cut to the child's window); the batch of them",
	},
	"subagents.check": {
		maxBytes: 2 * KIB,
		maxLines: 20,
		batchBytes: 2 * KIB,
		headShare: 0,
		doc: "the preview of a running child's output in subagent_check (its recent end)",
	},
	"subagents.name": { maxBytes: 40, maxLines: 1, clip: true, doc: "a child's title made from its task" },
	"subagents.toolArgs": {
		maxBytes: 80,
		maxLines: 1,
		clip: true,
		doc: "a child's recent tool call, arguments on one line",
	},
	"subagents.settledPrompt": {
		maxBytes: 500,
		maxLines: 500,
		clip: true,
		doc: "a settled child's task quoted in its completion entry",
	},
	"subagents.roster": {
		maxBytes: 4 * KIB,
		maxLines: 26,
		clip: true,
		doc: "children still running, queued or owed, re-stated after a compaction: 25 entries, then a count of the rest",
	},
	"subagents.rosterTask": {
		maxBytes: 120,
		maxLines: 1,
		clip: true,
		doc: "a child's task, briefly, in the roster after a compaction",
	},
	"subagents.question": {
		maxBytes: 2 * KIB,
		maxLines: 24,
		clip: true,
		doc: "a child's question to its parent (ask_parent), as the parent reads it",
	},
	"subagents.questionBrief": {
		maxBytes: 160,
		maxLines: 1,
		clip: true,
		doc: "one option of a child's question, or the question in brief (lists, roster, /subagents)",
	},
	"subagents.modelChoices": {
		maxBytes: 4 * KIB,
		maxLines: 21,
		clip: true,
		doc: "models named in a model error: 20 items, then a count of the rest",
	},
	"subagents.viewToolResult": {
		maxBytes: 2 * KIB,
		maxLines: 12,
		headShare: 0.5,
		fixed: true,
		doc: "a child's tool result in the /subagents live view (display only; full text one read away)",
	},
	"subagents.keylessProviders": {
		maxBytes: 1 * KIB,
		maxLines: 6,
		clip: true,
		doc: "providers without credentials named in a model error: 5 items, then a count of the rest",
	},
	"subagents.agentList": {
		maxBytes: 2 * KIB,
		maxLines: 24,
		fixed: true,
		doc: "the named agents listed in subagent_spawn's description (one line each, then the rest by name)",
	},
	"subagents.agentLine": {
		maxBytes: 200,
		maxLines: 1,
		clip: true,
		doc: "one agent's name and description in that list",
	},
	"subagents.agentNames": {
		maxBytes: 2 * KIB,
		maxLines: 41,
		clip: true,
		doc: "agents named in an unknown-agent error: 40 items, then a count of the rest",
	},
	"subagents.extensionError": {
		maxBytes: 400,
		maxLines: 1,
		clip: true,
		doc: "an extension's error quoted when a child cannot start because of it",
	},
	"subagents.agentFileError": {
		maxBytes: 200,
		maxLines: 1,
		clip: true,
		doc: "why an agent file's frontmatter could not be read, quoted in its warning",
	},
	"subagents.outputSchema": {
		maxBytes: 16 * KIB,
		maxLines: 16 * KIB,
		fixed: true,
		doc: "an output_schema as the child is shown it (a larger schema is refused at spawn)",
	},
	"subagents.schemaErrors": {
		maxBytes: 6 * 200,
		maxLines: 6,
		clip: true,
		doc: "validator errors quoted to a structured child and its parent: 5 items of 200 bytes, then a count of the rest",
	},
	"subagents.changedFiles": {
		maxBytes: 51 * 240,
		maxLines: 51,
		clip: true,
		doc: "changed files listed first in an isolated child's result: 50 items, then a count (the patch has all)",
	},

	// tool-artifacts: stubs that replace oversized tool results, per kind of output
	"toolArtifacts.stub.command": {
		maxBytes: 4096,
		maxLines: 100,
		headShare: 0.4,
		doc: "stub of a command log (errors and exit codes come last)",
	},
	"toolArtifacts.stub.search": { maxBytes: 4096, maxLines: 100, headShare: 0.6, doc: "stub of search results" },
	"toolArtifacts.stub.listing": { maxBytes: 4096, maxLines: 100, headShare: 0.6, doc: "stub of a file listing" },
	"toolArtifacts.stub.structured": {
		maxBytes: 4096,
		maxLines: 100,
		headShare: 0.7,
		doc: "stub of structured data (JSON)",
	},
	"toolArtifacts.stub.web": { maxBytes: 4096, maxLines: 100, headShare: 0.75, doc: "stub of a web page" },
	"toolArtifacts.stub.file": { maxBytes: 4096, maxLines: 100, headShare: 0.5, doc: "stub of file content" },
	"toolArtifacts.stub.unknown": {
		maxBytes: 4096,
		maxLines: 100,
		headShare: 0.5,
		doc: "stub of any other tool output",
	},
	"toolArtifacts.summary": {
		maxBytes: 4096,
		maxLines: 100,
		headShare: 0.75,
		doc: "a stub with a model's summary, but the summary's part: the verbatim excerpt, as without a model (the summary after it, not stored, is on top)",
	},
	"toolArtifacts.summaryBeside": {
		maxBytes: 1024,
		maxLines: 16,
		headShare: 0.75,
		doc: "a model's summary beside the verbatim excerpt in its stub, with its label and the notes about it (why there is none, that it disagrees with the scan): on top of the stub's own limits, never out of the excerpt's",
	},
	"toolArtifacts.stubOverflow": {
		maxBytes: 1024,
		maxLines: 16,
		doc: "what a command stub may add, all of it to its notable lines, when the log's scan found failures and they overflow the section's caps",
	},
	"toolArtifacts.indexRows": {
		maxBytes: 2 * KIB,
		maxLines: 13,
		clip: true,
		doc: "rows of a stub's index (files of a search, kinds of a listing): 12, then a count of the rest",
	},
	"toolArtifacts.recall": { maxBytes: 24 * KIB, maxLines: 600, doc: "one recall_artifact answer" },
	"toolArtifacts.recentIds": {
		maxBytes: 1 * KIB,
		maxLines: 5,
		clip: true,
		doc: "recent artifact ids named when recall_artifact gets an unknown id: a sample of 5 items, the rest not counted",
	},
	"toolArtifacts.summaryInput": {
		maxBytes: 50_000,
		maxLines: 1_000_000,
		doc: "the output sent to the summary model (head share: the kind's stub share)",
	},
	"toolArtifacts.args": {
		maxBytes: 2 * KIB,
		maxLines: 8,
		headShare: 0.75,
		doc: "a tool call's arguments quoted to the summary model",
	},

	// handoff: what the three handoff calls read
	"handoff.toolResult": {
		maxBytes: 8 * KIB,
		maxLines: 160,
		headShare: 0.6,
		doc: "one tool or shell output in the handoff transcript (errors come at the end)",
	},
	"handoff.piece": {
		maxBytes: 8 * KIB,
		maxLines: 160,
		doc: "one other long piece (reply, thinking, arguments, note) in the handoff transcript",
	},
	"handoff.currentState": {
		maxBytes: 2 * KIB,
		maxLines: 40,
		headShare: 0.2,
		doc: "each excerpt of the current state (latest tool outputs, last reply)",
	},
	"handoff.task": {
		maxBytes: 16 * KIB,
		maxLines: 16 * KIB,
		doc: "the original task as the handoff prompts show it",
	},
	"handoff.userMessages": {
		maxBytes: 16 * KIB,
		maxLines: 16 * KIB,
		doc: "the later user messages the handoff keeps, together",
	},
	"handoff.transcript": {
		maxBytes: PER_CALL,
		maxLines: PER_CALL,
		bytesPerLine: 1,
		doc: "the whole handoff transcript (bytes from the summarizing model's window)",
	},
	"handoff.modelList": {
		maxBytes: 4 * KIB,
		maxLines: 31,
		clip: true,
		doc: "models named when the handoff model is unknown: 30 items, then a count of the rest",
	},

	// transcripts: context-trim and forks
	"transcript.segment": {
		maxBytes: PER_CALL,
		maxLines: PER_CALL,
		bytesPerLine: 8,
		doc: "one long text of a kept message (bytes from the trim's water level)",
	},
	"transcript.briefArgs": {
		maxBytes: 50,
		maxLines: 1,
		clip: true,
		doc: "one brief argument of an omitted tool call in the omission index",
	},
	"transcript.briefsPerTool": {
		maxBytes: 3 * 50 + 2 * 2,
		maxLines: 3,
		clip: true,
		doc: "brief arguments kept per omitted tool in the omission index: 3 items with their separators",
	},
	"transcript.indexTools": {
		maxBytes: 4 * KIB,
		maxLines: 13,
		clip: true,
		doc: "omitted tools named in the omission index: 12 items, then a count of the rest",
	},
	"transcript.indexFiles": {
		maxBytes: 4 * KIB,
		maxLines: 21,
		clip: true,
		doc: "files touched by omitted calls, named in the omission index: 20 items, then a count of the rest",
	},
	"transcript.indexShortened": {
		maxBytes: 1 * KIB,
		maxLines: 9,
		clip: true,
		doc: "texts shown only as head and tail, named in the omission index: 8 items, then a count of the rest",
	},

	// logs: the notable lines a shortened log shows first (see projection/log.ts)
	"notable.lines": {
		maxBytes: 2 * KIB,
		maxLines: 24,
		headShare: 0.5,
		clip: true,
		doc: "notable lines listed first in a shortened log, heading included: at most this and this share (head share) of the log's own surface",
	},
	"notable.failing": {
		maxBytes: 3 * KIB,
		maxLines: 40,
		headShare: 0.75,
		clip: true,
		doc: "notable lines listed first in a shortened log whose scan found failures, heading included: at most this and this share (head share) of the log's own surface",
	},
	"notable.summaryInput": {
		maxBytes: 8 * KIB,
		maxLines: 100,
		headShare: 0.25,
		clip: true,
		doc: "notable lines listed first in the output sent to the summary model: at most this and this share (head share) of its input",
	},
	"notable.line": {
		maxBytes: 240,
		maxLines: 1,
		clip: true,
		doc: "one notable line in that list, its line number included",
	},

	// the projection's own footer
	"projection.reason": {
		maxBytes: 200,
		maxLines: 1,
		clip: true,
		doc: 'a store failure quoted in a "NOT saved" footer',
	},
} satisfies Record<string, SurfaceBudget>);

/**
 * Share of head + tail kept at the head in a shortened log whose scan found failures (its notable section
 * takes most of the view; a log's head is command echo and set-up).
 */
export const NOTABLE_FAILING_HEAD_SHARE = 0.2;

/** Name of a surface. */
export type SurfaceName = keyof typeof SURFACES;

/** Every surface name, in table order. */
export const SURFACE_NAMES = Object.keys(SURFACES) as SurfaceName[];

/** The table entry of `name` (typed as the general shape). */
export function surface(name: SurfaceName): SurfaceBudget {
	return SURFACES[name];
}

/** A field of an entry that a user (or a caller holding the user's configuration) may change. */
export type OverridableField = "maxBytes" | "maxLines" | "headShare" | "batchBytes";

/** What a user (or a caller holding the user's configuration) may change in an entry. */
export type SurfaceOverride = Partial<Pick<SurfaceBudget, OverridableField>>;

/**
 * The fields of `name` a user may override by name: none for a clipped or fixed surface (their sizes are
 * part of the wording around them), `batchBytes` too for a batch surface, else bytes, lines and head share.
 * For a surface sized per call, `maxBytes` and `maxLines` are ceilings over the call's own figures.
 */
export function overridableFields(name: SurfaceName): readonly OverridableField[] {
	const entry: SurfaceBudget = SURFACES[name];
	if (entry.clip || entry.fixed) return [];
	if (entry.batchBytes !== undefined) return ["maxBytes", "maxLines", "headShare", "batchBytes"];
	return ["maxBytes", "maxLines", "headShare"];
}

/** The entry of `name` with `override`'s defined fields in place of the table's. */
export function resolveSurface(name: SurfaceName, override: SurfaceOverride = {}): SurfaceBudget {
	const entry: SurfaceBudget = SURFACES[name];
	const out: { -readonly [K in keyof SurfaceBudget]: SurfaceBudget[K] } = { ...entry };
	if (override.maxBytes !== undefined) out.maxBytes = override.maxBytes;
	if (override.maxLines !== undefined) out.maxLines = override.maxLines;
	if (override.headShare !== undefined) out.headShare = override.headShare;
	if (override.batchBytes !== undefined) out.batchBytes = override.batchBytes;
	return Object.freeze(out);
}
