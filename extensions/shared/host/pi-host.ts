/**
 * Pi-line shims: every difference between Pi 0.73 (`@mariozechner/pi-coding-agent`) and Pi 1.x
 * (`@earendil-works/pi-coding-agent`) that an extension needs at run time, behind one typed face.
 * Each function feature-detects the 1.x seam and falls back to the 0.73 way, so one source serves
 * both lines (the 1.x loader maps the old import names to its own modules).
 *
 * - one-off model calls: 1.x `ctx.modelRegistry.complete()` (request-time auth, sees providers other
 *   extensions registered); 0.73 pi-ai's global `complete` with the registry's credentials. Prompt
 *   caching is off for these calls (`cacheRetention: "none"`), as Pi does for its own summaries.
 * - Pi's effective compaction settings (global, project when trusted, per-model overrides on 1.x).
 * - tool exposure (1.x `exposure: "deferred"` found through `tool_search`; 0.73 has neither).
 * - events only 1.x emits (agent_settled, agent_before_settle, session_compact_failed), with their 1.x
 *   shapes (onPi1Event); on 0.73 they never fire, so callers pair agent_settled with agent_end polling.
 * - project trust: 1.x `ctx.isProjectTrusted()`, its trust store (`<agentDir>/trust.json`), whether Pi gates a
 *   folder, and its `--approve` flags; 0.73 has none of these and loads project files (see ./trust.ts).
 * - UI presence (`ctx.hasUI` with a `ui` to draw on; print and json modes have none), and Pi 1.x's
 *   `ctx.mode`, which tells a single-shot run (print/json: the process ends with the run) apart.
 * - where the system prompt and tool declarations are in the request: since Pi 0.87 the transcript carries
 *   them as system messages, which `context` handlers no longer see and `context_with_system` handlers do
 *   (hostSeesSystemMessages); before, Pi sent `ctx.getSystemPrompt()` and the active tools beside the list.
 */

import type { Api, AssistantMessage, Context, Model } from "@mariozechner/pi-ai";
import * as piAi from "@mariozechner/pi-ai";
import * as PiSdk from "@mariozechner/pi-coding-agent";
import { type ExtensionContext, SettingsManager } from "@mariozechner/pi-coding-agent";

/**
 * Whether Pi trusts the project's own files: Pi 1.x asks the user (ctx.isProjectTrusted()); Pi 0.73 has no
 * project trust and loads project resources anyway, so an absent check counts as trusted. A check that
 * throws counts as untrusted.
 */
export function projectTrusted(ctx: unknown): boolean {
	const check = (ctx as { isProjectTrusted?: unknown } | undefined)?.isProjectTrusted;
	if (typeof check !== "function") return true;
	try {
		return check.call(ctx) !== false;
	} catch {
		return false;
	}
}

/** Whether this context can draw and notify (the TUI, or rpc's UI bridge); print and json modes cannot. */
export function hasUI(ctx: ExtensionContext | undefined): boolean {
	return ctx?.hasUI === true && typeof ctx.ui === "object" && ctx.ui !== null;
}

/**
 * Pi 1.x's single-shot run modes ("print": `pi -p` text output; "json": `--mode json`), where the process
 * exits once the run settles and no UI is bound. Undefined with a UI (tui, rpc) and on Pi 0.73, whose
 * context has no `mode` (and whose runs have no agent_before_settle boundary to hold them open).
 */
export function singleShotMode(ctx: unknown): "print" | "json" | undefined {
	try {
		const mode = (ctx as { mode?: unknown } | undefined)?.mode;
		return mode === "print" || mode === "json" ? mode : undefined;
	} catch {
		return undefined;
	}
}

/** Options of a one-off call (a summary, a handoff step): never cached, never the session's turn. */
export interface OneOffCallOptions {
	maxTokens?: number;
	temperature?: number;
	signal?: AbortSignal;
	/** Provider-level retries of a failed request. */
	maxRetries?: number;
}

/** The part of Pi's model registry the shims use, as either line has it. */
interface RegistryLike {
	complete?: (model: Model<Api>, context: Context, options?: Record<string, unknown>) => Promise<AssistantMessage>;
	getApiKeyAndHeaders?: (
		model: Model<Api>,
	) => Promise<{ ok: boolean; apiKey?: string; headers?: Record<string, string>; error?: string }>;
	getApiKey?: (model: Model<Api>) => Promise<string | undefined>;
}

/** Which way a one-off call goes on this Pi line. */
export function modelCallRoute(registry: unknown): "registry" | "pi-ai" {
	return typeof (registry as RegistryLike | undefined)?.complete === "function" ? "registry" : "pi-ai";
}

/** pi-ai's global `complete` (0.73; on 1.x a compat alias slated for removal), or undefined once it is gone. */
function globalComplete(): RegistryLike["complete"] {
	const fn = (piAi as unknown as { complete?: unknown }).complete;
	return typeof fn === "function" ? (fn as RegistryLike["complete"]) : undefined;
}

/**
 * One model call through the host: the registry's `complete` on 1.x, pi-ai's `complete` with the
 * registry's credentials on 0.73. Rejects only where the provider layer does (a reply with
 * stopReason "error"/"aborted" comes back as a message, as from pi-ai).
 */
export async function completeOneOff(
	registry: unknown,
	model: Model<Api>,
	context: Context,
	options: OneOffCallOptions,
): Promise<AssistantMessage> {
	const r = registry as RegistryLike;
	const base = {
		maxTokens: options.maxTokens,
		temperature: options.temperature,
		signal: options.signal,
		maxRetries: options.maxRetries,
		cacheRetention: "none" as const,
	};
	if (typeof r.complete === "function") return r.complete.call(registry, model, context, base);
	const complete = globalComplete();
	if (!complete) throw new Error("this Pi has neither modelRegistry.complete nor pi-ai's complete");
	let apiKey: string | undefined;
	let headers: Record<string, string> | undefined;
	let routed = model;
	if (typeof r.getApiKeyAndHeaders === "function") {
		const auth = (await r.getApiKeyAndHeaders.call(registry, model)) as {
			ok: boolean;
			apiKey?: string;
			headers?: Record<string, string>;
			error?: string;
			baseUrl?: string;
		};
		if (!auth.ok) throw new Error(auth.error ?? `no credentials for ${model.provider}/${model.id}`);
		apiKey = auth.apiKey;
		headers = auth.headers;
		if (auth.baseUrl) routed = { ...model, baseUrl: auth.baseUrl };
	} else if (typeof r.getApiKey === "function") {
		apiKey = await r.getApiKey.call(registry, model);
	}
	return complete(routed, context, { ...base, apiKey, headers });
}

/** Pi's compaction settings as they apply to one model. */
export interface CompactionSettingsReading {
	enabled: boolean;
	/** Pi compacts when fewer than this many tokens of the window are free. */
	reserveTokens: number;
	/** Recent tokens Pi keeps verbatim. */
	keepRecentTokens: number;
}

/** Pi's built-in compaction defaults (both lines). */
export const PI_DEFAULT_COMPACTION: Readonly<CompactionSettingsReading> = Object.freeze({
	enabled: true,
	reserveTokens: 16_384,
	keepRecentTokens: 20_000,
});

function validReading(value: unknown): CompactionSettingsReading | undefined {
	const v = value as Partial<CompactionSettingsReading> | undefined;
	if (!v || typeof v !== "object") return undefined;
	const ok = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0;
	if (!ok(v.reserveTokens) || !ok(v.keepRecentTokens)) return undefined;
	return { enabled: v.enabled !== false, reserveTokens: v.reserveTokens, keepRecentTokens: v.keepRecentTokens };
}

/** `preparation.settings` of a session_before_compact event, when well-formed (both lines carry it). */
export function compactionSettingsOf(preparation: unknown): CompactionSettingsReading | undefined {
	return validReading((preparation as { settings?: unknown } | undefined)?.settings);
}

/**
 * Pi's effective compaction settings for `model`, read the way Pi reads them: the agent dir's
 * settings.json, the project's `.pi/settings.json` (on 1.x only when the project is trusted), and on
 * 1.x `compaction.modelOverrides["provider/id"]`. Pi's defaults when anything fails.
 */
export function readCompactionSettings(
	cwd: string,
	agentDir: string,
	model: { provider: string; id: string } | undefined,
	projectTrusted: boolean,
): CompactionSettingsReading {
	try {
		const create = SettingsManager.create as unknown as (
			cwd: string,
			agentDir: string,
			options?: { projectTrusted?: boolean },
		) => { getCompactionSettings(model?: { provider: string; id: string }): unknown };
		const manager = create(cwd, agentDir, { projectTrusted });
		return validReading(manager.getCompactionSettings(model)) ?? { ...PI_DEFAULT_COMPACTION };
	} catch {
		return { ...PI_DEFAULT_COMPACTION };
	}
}

/** Registration fields of a rarely used tool: deferred on Pi 1.x (0.73 ignores the field; the tool stays direct). */
export const DEFERRED_EXPOSURE = Object.freeze({ exposure: "deferred" as const });

/** The tool-set calls the settling needs (both Pi lines have them). */
export interface ToolSetApi {
	getActiveTools(): string[];
	setActiveTools(names: string[]): void;
}

/**
 * Decide, once a session starts, how the tools registered with DEFERRED_EXPOSURE reach the model:
 * left to Pi 1.x's `tool_search` when deferral is wanted and tool_search is active; otherwise declared
 * directly (activated), as on 0.73 — but only alongside `anchor` (the extension's main tool) when it
 * is active, so a `--tools` list that leaves the extension out keeps it out. Returns what it chose.
 */
export function settleDeferredTools(
	pi: ToolSetApi,
	names: readonly string[],
	defer: boolean,
	anchor?: string,
): "deferred" | "direct" | "inactive" {
	let active: string[];
	try {
		active = pi.getActiveTools();
	} catch {
		return "inactive";
	}
	if (defer && active.includes("tool_search")) return "deferred";
	if (anchor !== undefined && !active.includes(anchor)) return "inactive";
	const missing = names.filter((n) => !active.includes(n));
	if (missing.length > 0) pi.setActiveTools([...active, ...missing]);
	return "direct";
}

/** What triggered a compaction, as Pi 1.x's session_before_compact / session_compact_failed say it. */
export type HostCompactionReason = "manual" | "threshold" | "overflow";

/** `reason` of a compaction event (Pi 1.x); undefined on 0.73, which does not say. */
export function compactionReasonOf(event: unknown): HostCompactionReason | undefined {
	const r = (event as { reason?: unknown } | undefined)?.reason;
	return r === "manual" || r === "threshold" || r === "overflow" ? r : undefined;
}

/** Pi 1.x's session_compact_failed event. */
export interface CompactFailedEvent {
	reason?: HostCompactionReason;
	/** Error text when compaction failed for a non-abort reason. */
	errorMessage?: string;
	/** True when compaction was cancelled or aborted. */
	aborted?: boolean;
	willRetry?: boolean;
	/** True when the failing compaction content came from a session_before_compact handler. */
	fromExtension?: boolean;
}

/** A session entry a Pi 1.x boundary handler proposes (the kinds this package writes). */
export type BoundaryDraft =
	| { type: "custom"; customType: string; data?: unknown }
	| { type: "custom_message"; customType: string; content: string; display: boolean; details?: unknown };

/** Pi 1.x's agent_before_settle event (the part the package uses). */
export interface BeforeSettleEvent {
	/** Drafts proposed so far by earlier handlers; a handler returns them with its own appended. */
	entries: unknown[];
	continue: boolean;
	outcome?: "completed" | "aborted" | "error";
}

/**
 * What an agent_before_settle (or turn_end) handler returns on Pi 1.x: `entries` replaces the proposal
 * (so it carries the earlier ones), `continue: true` asks for one more provider request.
 */
export interface BoundaryResult {
	entries?: unknown[];
	continue?: boolean;
}

/** Events only Pi 1.x emits; on 0.73 a handler for them is registered and never called. */
export interface Pi1Events {
	agent_settled: { aborted?: boolean };
	agent_before_settle: BeforeSettleEvent;
	session_compact_failed: CompactFailedEvent;
}

/** Subscribe to a Pi 1.x-only event with its 1.x shape (the 0.73 types do not know these names). */
export function onPi1Event<K extends keyof Pi1Events, C>(
	pi: { on: unknown },
	name: K,
	handler: (event: Pi1Events[K], ctx: C) => unknown,
): void {
	(pi.on as (event: string, handler: (event: unknown, ctx: unknown) => unknown) => void).call(pi, name, (e, c) =>
		handler(e as Pi1Events[K], c as C),
	);
}

/**
 * Whether this Pi hands `context_with_system` handlers the whole request (system messages with the prompt,
 * its section patches and the tool declarations, then the conversation) and sends what they return as is:
 * Pi 0.87 and later (the 1.x line). Detected on the host's own session manager, which gained
 * `appendContextEdit` in the same release (0.87), so the answer holds however this package's imports
 * resolve. On 0.73 the `context` hook is the one to use, with `ctx.getSystemPrompt()` and the active
 * tools beside the list.
 */
export function hostSeesSystemMessages(ctx: unknown): boolean {
	const sm = (ctx as { sessionManager?: { appendContextEdit?: unknown } } | undefined)?.sessionManager;
	return typeof sm?.appendContextEdit === "function";
}

/**
 * The messages of the session's current branch as Pi hands them to the next request's `context` hook
 * (before the new prompt): 1.x `sessionManager.buildSessionProjection()` (context edits applied), 0.73
 * `sessionManager.buildSessionContext()` — what Pi sets the agent's messages to when it resumes a session.
 * Undefined when the host has neither (a stand-in of Pi's API) or reading fails.
 */
export function sessionHistory(ctx: unknown): unknown[] | undefined {
	type Built = { messages?: unknown };
	const sm = (ctx as { sessionManager?: Record<string, unknown> } | undefined)?.sessionManager;
	const build = sm?.buildSessionProjection ?? sm?.buildSessionContext;
	if (typeof build !== "function") return undefined;
	try {
		const messages = (build.call(sm) as Built | undefined)?.messages;
		return Array.isArray(messages) ? messages : undefined;
	} catch {
		return undefined;
	}
}

/** Pi 1.x's `context_with_system` event: the full transcript, system messages included. */
export interface ContextWithSystemEvent {
	messages: unknown[];
}

/** Subscribe to `context_with_system` (the 0.73 types do not know it; 0.73 never emits it). */
export function onContextWithSystem<C>(
	pi: { on: unknown },
	handler: (event: ContextWithSystemEvent, ctx: C) => unknown,
): void {
	(pi.on as (event: string, handler: (event: unknown, ctx: unknown) => unknown) => void).call(
		pi,
		"context_with_system",
		(e, c) => handler(e as ContextWithSystemEvent, c as C),
	);
}

/** One explicit decision of Pi 1.x's trust store: the folder it names and whether it is trusted. */
export interface PiTrustEntry {
	path: string;
	decision: boolean;
}

type PiTrustStoreClass = new (agentDir: string) => { getEntry(cwd: string): PiTrustEntry | null };

/** Pi 1.x's trust store class (`<agentDir>/trust.json`), or undefined on Pi 0.73 (which has none). */
function piTrustStoreClass(): PiTrustStoreClass | undefined {
	const found = (PiSdk as Record<string, unknown>).ProjectTrustStore;
	return typeof found === "function" ? (found as PiTrustStoreClass) : undefined;
}

/** Whether this Pi line keeps explicit project trust decisions (Pi 1.x); Pi 0.73 has no trust store. */
export function piHasTrustStore(): boolean {
	return piTrustStoreClass() !== undefined;
}

/**
 * The nearest explicit decision for `cwd` in Pi 1.x's trust store: undefined on Pi 0.73 (no store), null when
 * there is none or the store cannot be read (an unreadable store never trusts anything).
 */
export function piTrustStoreEntry(agentDir: string, cwd: string): PiTrustEntry | null | undefined {
	const Store = piTrustStoreClass();
	if (!Store) return undefined;
	try {
		const entry = new Store(agentDir).getEntry(cwd);
		return entry && typeof entry.decision === "boolean" ? { path: entry.path, decision: entry.decision } : null;
	} catch {
		return null;
	}
}

/**
 * Whether Pi 1.x itself gates this folder (it holds resources Pi asks about before loading: `.pi/settings.json`,
 * `.pi/extensions`, `.agents/skills`, …). Only then does `ctx.isProjectTrusted()` mean the user was asked.
 */
export function piGatesProject(cwd: string): boolean {
	const gates = (PiSdk as Record<string, unknown>).hasTrustRequiringProjectResources;
	if (typeof gates !== "function") return false;
	try {
		return gates(cwd) === true;
	} catch {
		return false;
	}
}

/**
 * Pi 1.x's `--approve` / `-a` (true) and `--no-approve` / `-na` (false) on this process's command line: an explicit
 * decision for this run. Undefined when neither is given, and always on Pi 0.73 (no such flags).
 */
export function piApproveFlag(argv: readonly string[] = process.argv): boolean | undefined {
	if (!piHasTrustStore()) return undefined;
	const end = argv.indexOf("--");
	const args = end >= 0 ? argv.slice(0, end) : argv;
	if (args.some((a) => a === "--no-approve" || a === "-na")) return false;
	if (args.some((a) => a === "--approve" || a === "-a")) return true;
	return undefined;
}
