/**
 * The /subagents command: the picker and live view in the TUI (ctx.ui.custom, both Pi lines), a plain
 * list where there is no custom UI (print, json and rpc modes). Nothing here reaches the parent's model
 * context: steering goes to the child through subagent_send's own handler, cancelling through the
 * manager (the cancelled result then reaches the parent as any settled result does), and the view
 * writes no message and no entry. `/subagents trust` (`untrust`, `forget`) records whether this project's agent
 * files apply; project agents kept out by it are named each time the command runs.
 */
import type { ExtensionCommandContext, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { folderTrust, trustCommand, untrustedHint } from "../../shared/host/trust.ts";
import { project } from "../../shared/projection/projection.ts";
import type { ChildRecord } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { CANCELLED_IN_VIEW } from "../prompt/common.ts";
import { type SendDeps, sendTool } from "../tools/send.ts";
import { type OtherChild, otherTag } from "./others.ts";
import { paintFor } from "./render.ts";
import { newestFirst, pickerHeader, pickerRow, SubagentsScreen } from "./screens.ts";
import { TranscriptReader } from "./transcript.ts";

/** How often an open view re-reads transcripts and redraws, in milliseconds. */
export const VIEW_REFRESH_MS = 250;
/** Projected tool results kept per open view (each is computed once). */
const PROJECTION_CACHE_ENTRIES = 500;

/**
 * The plain list (no custom UI): header and one row per child, newest first; then, under their own heading,
 * the running children of other sessions of this process, each marked with its session.
 */
export function plainList(children: readonly ChildRecord[], now: number, others: readonly OtherChild[] = []): string {
	const lines =
		children.length === 0
			? ["subagents: none in this session yet"]
			: [
					`subagents of this session: ${children.length} (newest first)`,
					pickerHeader().trimEnd(),
					...newestFirst(children).map((c) => pickerRow(c, children, now).trimEnd()),
				];
	if (others.length > 0) {
		lines.push(`running in other sessions of this process: ${others.length} (cancel only)`);
		if (children.length === 0) lines.push(pickerHeader().trimEnd());
		for (const o of others) lines.push(`${pickerRow(o.child, o.siblings, now, true)} ${otherTag(o.label)}`);
	}
	return lines.join("\n");
}

/** Children of other sessions of this process: listed (marked) and cancellable from /subagents, nothing else. */
export interface OtherSessions {
	list(ctx: ExtensionContext): readonly OtherChild[];
	cancel(session: string, id: string): Promise<void>;
}

/** What the view uses: what subagent_send uses (steering), the children as they are now, the store. */
export type ViewDeps = SendDeps & Pick<SubagentServices, "existingChildren" | "store" | "agents" | "agentDir">;

/**
 * The handler of /subagents (registered at start by view-command.ts, loaded at its first use); `enter` hands each
 * command's context to the adapter first (as every tool call does).
 */
export function subagentsCommand(
	deps: ViewDeps,
	enter: (ctx: ExtensionContext) => void,
	elsewhere?: OtherSessions,
): (args: string, ctx: ExtensionCommandContext) => Promise<void> {
	return async (args, ctx) => {
		enter(ctx);
		const tell = (text: string, level: "info" | "warning" | "error" = "info") => {
			if (ctx.hasUI) ctx.ui.notify(text, level);
			else process.stderr.write(`${text}\n`);
		};
		const verb = args.trim();
		if (verb === "trust" || verb === "untrust" || verb === "forget") {
			try {
				tell(`subagents: ${trustCommand(deps.agentDir(), ctx.cwd, verb)}`);
			} catch (error) {
				tell(`subagents: ${error instanceof Error ? error.message : String(error)}`, "error");
			}
			return;
		}
		// Project agents this project's trust keeps out: said every time, with the command that trusts it.
		const ignored = deps
			.agents(ctx)
			.folders.filter((f) => f.exists && !f.read && (f.source === "project" || f.source === "claude-project"));
		if (ignored.length > 0) {
			const hint = untrustedHint(folderTrust(deps.agentDir(), ctx.cwd, ctx), "/subagents trust");
			tell(`subagents: project agents ignored: ${ignored.map((f) => f.dir).join(", ")}: ${hint}`, "warning");
		}
		const manager = deps.children(ctx);
		let shown = false;
		if (ctx.hasUI) {
			await ctx.ui.custom<void>((tui, theme, _keys, done) => {
				shown = true;
				const readers = new Map<string, TranscriptReader>();
				const projected = new Map<string, string>();
				let timer: ReturnType<typeof setInterval> | undefined;
				const close = () => {
					if (timer) clearInterval(timer);
					timer = undefined;
					done();
				};
				const screen = new SubagentsScreen({
					children: () => deps.existingChildren()?.list() ?? manager.list(),
					transcript: (c) => {
						// By file: children of other sessions may share an id with this session's.
						const key = c.sessionFile ?? `none:${c.id}`;
						let reader = readers.get(key);
						if (!reader || reader.path !== c.sessionFile) {
							reader = new TranscriptReader(c.sessionFile);
							readers.set(key, reader);
						}
						reader.poll();
						return { items: reader.items, state: reader.state };
					},
					project: (text) => {
						const known = projected.get(text);
						if (known !== undefined) return known;
						const view = project(text, "subagents.viewToolResult", {
							sink: deps.store().sink("transcripts"),
						}).text;
						if (projected.size >= PROJECTION_CACHE_ENTRIES) projected.clear();
						projected.set(text, view);
						return view;
					},
					send: async (id, text) => {
						const reply = await sendTool(deps, { id, text }, ctx as ExtensionContext);
						return (
							reply.content
								.map((c) => c.text)
								.join("\n")
								.split("\n")[0] ?? ""
						);
					},
					cancel: (id) => manager.cancel([id], CANCELLED_IN_VIEW),
					others: () => elsewhere?.list(ctx) ?? [],
					cancelOther: (session, id) =>
						elsewhere ? elsewhere.cancel(session, id) : Promise.reject(new Error("not available")),
					rows: () => tui.terminal.rows,
					requestRender: () => tui.requestRender(),
					paint: paintFor(theme),
					close,
				});
				timer = setInterval(() => tui.requestRender(), VIEW_REFRESH_MS);
				timer.unref?.();
				return screen;
			});
		}
		if (shown) return;
		// No custom UI (print, json, rpc): the list as text, where the person reads it; never to the model.
		const text = plainList(manager.list(), Date.now(), elsewhere?.list(ctx) ?? []);
		if (ctx.hasUI) ctx.ui.notify(text, "info");
		else process.stderr.write(`${text}\n`);
	};
}
