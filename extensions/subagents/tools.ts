/**
 * The handlers of subagent_wait, check, send, cancel and list: validate, call the manager, and pass every
 * child output through the batch projection. subagent_spawn's handler is in tool-spawn.ts. Errors are
 * thrown with text that lists the valid choices.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { projectBatch } from "./batch.ts";
import { batchDetails, batchInput, persistDelivered, recordArtifacts } from "./delivery.ts";
import { isSettled, partitionIds, type SettledResult, statusGlyph } from "./domain.ts";
import { batchOptions, type Env, ensureManager, ensureStore } from "./env.ts";
import * as P from "./prompt.ts";
import { OUTPUT_SCHEMA_REMINDER } from "./prompt-checkable.ts";
import type { ChildRow } from "./render.ts";
import { type OnUpdate, reply, row, type ToolReturn } from "./tool-reply.ts";
import { arrivalOf, resumeSettings } from "./tool-spawn.ts";

export { type SpawnParams, spawnTool } from "./tool-spawn.ts";

function requireIds(env: Env, requested: string[]): string[] {
	const known = env.manager?.ids() ?? [];
	const { known: good, unknown } = partitionIds(requested, known);
	if (unknown.length > 0) throw new Error(P.unknownIdsError(unknown, known));
	return good;
}

/** subagent_wait's parameters (described to the model in TOOL_TEXT.wait). */
export interface WaitParams {
	ids?: string[];
	timeout_s?: number;
	mode?: "all" | "any";
}

export async function waitTool(
	env: Env,
	params: WaitParams,
	signal: AbortSignal | undefined,
	onUpdate: OnUpdate,
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	let ids: string[];
	if (params.ids && params.ids.length > 0) ids = requireIds(env, params.ids);
	else {
		if (manager.list().length === 0) return reply(P.NO_CHILDREN, { rows: [] });
		ids = manager
			.list()
			.filter((c) => !isSettled(c.state) || manager.ledger.latest(c.id)?.delivery === "pending")
			.map((c) => c.id);
		if (ids.length === 0) return reply(P.NOTHING_TO_WAIT_FOR, { rows: [] });
	}
	const mode = params.mode === "any" ? "any" : "all";
	const timeoutMs =
		typeof params.timeout_s === "number" && params.timeout_s >= 0 ? Math.round(params.timeout_s * 1000) : undefined;
	const throttle = Math.max(250, env.config.subagents.pollThrottleMs);
	const outcome = await manager.waitFor(ids, {
		mode,
		timeoutMs,
		signal,
		tickMs: throttle,
		onTick: onUpdate
			? () =>
					onUpdate(
						reply(
							P.waitProgress(
								ids.map((id) => manager.get(id)!),
								Date.now(),
							),
							{ progress: true },
						),
					)
			: undefined,
	});
	return consume(env, ctx, ids, outcome, "wait", params.timeout_s);
}

/**
 * Where the full text of a result someone else received lives. The other delivery may still be
 * projecting it (a race within one tick), so the path is not known yet: the content-addressed store
 * gives the same file for the same text, so storing it here names that file (or creates it).
 */
async function deliveredPath(env: Env, result: SettledResult): Promise<string | undefined> {
	if (result.artifactPath) return result.artifactPath;
	const put = await ensureStore(env).put("subagent-results", result.text);
	if (!put.ok) return undefined;
	result.artifactPath ??= put.path;
	return put.path;
}

/** Hand out the results of `ids` (claiming them for this tool) plus status lines for the rest. */
async function consume(
	env: Env,
	ctx: ExtensionContext,
	ids: string[],
	outcome: { timedOut: boolean; aborted: boolean; header?: string },
	timeoutLabel: "wait" | "cancel",
	timeoutSeconds?: number,
): Promise<ToolReturn> {
	const manager = env.manager!;
	const now = Date.now();
	const leading: string[] = [];
	const extraRows: ChildRow[] = [];
	const claimed: SettledResult[] = [];
	const finished = ids.filter((id) => isSettled(manager.get(id)!.state)).length;
	if (outcome.header) leading.push(outcome.header);
	else if (outcome.timedOut) leading.push(P.waitTimeoutHeader(timeoutSeconds ?? 0, finished, ids.length));
	else if (outcome.aborted) leading.push(P.waitAbortedHeader(finished, ids.length));
	// Claims first, all before any await: a concurrent automatic delivery sees them at once. Each id's
	// line is decided here too, so a child settling during a later await cannot drop out of the text.
	const taken = new Map<string, SettledResult>();
	const unsettled: string[] = [];
	for (const id of ids) {
		const latest = manager.ledger.latest(id);
		if (!latest || !isSettled(manager.get(id)!.state)) unsettled.push(id);
		else if (manager.ledger.claim(latest.key, "wait")) claimed.push(latest);
		else taken.set(id, latest);
	}
	try {
		for (const id of ids) {
			const child = manager.get(id)!;
			const other = taken.get(id);
			if (unsettled.includes(id)) {
				leading.push(P.statusLine(child, now));
				extraRows.push(row(child));
			} else if (other) {
				const path = await deliveredPath(env, other);
				leading.push(P.alreadyDeliveredLine(child, other.delivery === "auto" ? "auto" : "wait", path));
				extraRows.push({ ...row(child, "already received"), artifactPath: path });
			}
		}
		const batch = await projectBatch(
			claimed.map((r) => batchInput(manager, r)),
			batchOptions(env, ctx, "wait", { leading }),
		);
		recordArtifacts(manager, batch.items);
		persistDelivered(
			env,
			claimed.map((r) => r.key),
			"wait",
		);
		return reply(batch.text, { ...batchDetails(manager, batch, extraRows), tool: timeoutLabel });
	} catch (error) {
		for (const r of claimed) manager.ledger.release(r.key);
		throw error;
	}
}

export async function checkTool(env: Env, params: { id: string }, ctx: ExtensionContext): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	const [id] = requireIds(env, [params.id]);
	const child = manager.get(id)!;
	const recent = isSettled(child.state)
		? (manager.ledger.latest(id)?.text ?? child.finalText ?? "")
		: child.partialText;
	let output = "";
	let details: Record<string, unknown> = { rows: [row(child)] };
	if (recent.length > 0) {
		const batch = await projectBatch([{ id, run: child.run, header: "", text: recent, noRoom: () => "" }], {
			...batchOptions(env, ctx, "check"), // its head share (0 in the table): the recent end
			notable: !isSettled(child.state), // a running child's output leads with its notable lines; a final report is prose
		});
		output = batch.text.replace(/^\n/, "");
		details = { ...batchDetails(manager, batch), rows: [row(child)] };
	}
	return reply(P.checkText(child, Date.now(), output), details);
}

export async function sendTool(
	env: Env,
	params: { id: string; text: string },
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	const [id] = requireIds(env, [params.id]);
	if (typeof params.text !== "string" || params.text.trim().length === 0) throw new Error(P.EMPTY_SEND_TEXT_ERROR);
	const child = manager.get(id)!;
	const resume = manager.isRestored(id) ? resumeSettings(env, child, ctx) : undefined;
	// A structured child's new run must end with the JSON again; a steer joins the run that already must.
	const text = child.structured && isSettled(child.state) ? params.text + OUTPUT_SCHEMA_REMINDER : params.text;
	const outcome = await manager.send(id, text, resume);
	if (outcome === "queued-child") throw new Error(P.queuedSendError(child));
	return reply(outcome === "steered" ? P.steeredText(child) : P.rerunText(child, arrivalOf(env, ctx)), {
		rows: [row(child)],
	});
}

export async function cancelTool(env: Env, params: { ids: string[] }, ctx: ExtensionContext): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	const ids = requireIds(env, params.ids ?? []);
	const active = ids.filter((id) => !isSettled(manager.get(id)!.state));
	await manager.cancel(active);
	const lines = ids.filter((id) => !active.includes(id)).map((id) => P.alreadySettledCancelLine(manager.get(id)!));
	const header = [P.cancelHeader(active.length), ...lines].join("\n");
	return consume(env, ctx, active, { timedOut: false, aborted: false, header }, "cancel");
}

export function listTool(env: Env, ctx: ExtensionContext): ToolReturn {
	const manager = ensureManager(env, ctx);
	const children = manager.list();
	if (children.length === 0) return reply(P.NO_CHILDREN, { rows: [] });
	const now = Date.now();
	return reply(children.map((c) => P.listLine(c, now, statusGlyph(c.state))).join("\n"), {
		rows: children.map((c) => row(c)),
	});
}

export { consume as consumeResults };
