/**
 * The children of other sessions of this process, as the widget and /subagents show them: only those still
 * running, queued or waiting in their session's process-wide home (children/home.ts), each marked with its
 * session's short name. Display and cancel only: steering, waiting and every `subagent_*` tool stay with the
 * active session's own children, and a cancelled child's result is recorded in its own session (its home
 * keeps it until that session is active again), never in the active one.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import { sanitizeLine } from "../../shared/text/sanitize.ts";
import type { ChildRecord, ChildState } from "../domain/records.ts";
import { askingCount } from "../prompt/ask.ts";
import type { Paint } from "./render.ts";

/** What the view needs of a home: its key, its session's name, its children, a way to cancel one. */
export interface OtherHome {
	readonly key: string;
	readonly name: string | undefined;
	readonly manager: { list(): ChildRecord[]; cancel(ids: string[], error?: string): Promise<void> };
}

/** One child of another session. */
export interface OtherChild {
	readonly child: ChildRecord;
	/** Every child of its session (queue positions are counted there). */
	readonly siblings: readonly ChildRecord[];
	/** Its session's home key. */
	readonly session: string;
	/** Its session's short name, safe to draw. */
	readonly label: string;
}

/** Columns of a session's name in a tag. */
export const SESSION_LABEL_COLUMNS = 24;
/** Characters of a session id shown when the session has no name. */
const SHORT_ID_CHARS = 8;

const ACTIVE: ReadonlySet<ChildState> = new Set(["starting", "running", "queued", "waiting"]);

/** True for a child still to settle (the only ones of other sessions shown). */
export function isActive(c: ChildRecord): boolean {
	return ACTIVE.has(c.state);
}

/** The short id of a home key: Pi's session files end in "_<uuid>.jsonl"; keys without a file are "id:<id>". */
function shortId(key: string): string {
	const base = key.startsWith("id:") ? key.slice(3) : (key.split(/[\\/]/).pop() ?? key).replace(/\.jsonl$/, "");
	const id = base.includes("_") ? base.slice(base.lastIndexOf("_") + 1) : base;
	return id.slice(0, SHORT_ID_CHARS) || "?";
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Plain text cut to `columns` (an ellipsis marks the cut), without the styling resets pi-tui's cut adds. */
function cutToWidth(text: string, columns: number): string {
	if (visibleWidth(text) <= columns) return text;
	let out = "";
	let used = 0;
	for (const { segment } of graphemes.segment(text)) {
		const w = visibleWidth(segment);
		if (used + w > columns - 1) break;
		out += segment;
		used += w;
	}
	return `${out}…`;
}

/** Sanitized to one line, runs of white space as one space. */
function safeLine(text: string): string {
	return sanitizeLine(text, { widthOf: visibleWidth }).replace(/\s+/g, " ").trim();
}

/** A session's short name, safe to draw: its name (hostile text sanitized, cut to width) or its short id. */
export function sessionLabel(home: Pick<OtherHome, "key" | "name">): string {
	const name = home.name ? safeLine(home.name) : "";
	return cutToWidth(name || safeLine(shortId(home.key)) || "?", SESSION_LABEL_COLUMNS);
}

/** The mark of another session's child. */
export function otherTag(label: string): string {
	return `other session: ${label}`;
}

/**
 * The running, queued and waiting children of every home but the active session's (by key, and by manager:
 * the active instance's own children are never listed twice): session by session, newest first in each.
 */
export function otherSessionChildren(
	homes: Iterable<OtherHome>,
	activeKey: string | undefined,
	own?: unknown,
): OtherChild[] {
	const out: OtherChild[] = [];
	for (const home of homes) {
		if (home.key === activeKey || (own !== undefined && home.manager === own)) continue;
		let siblings: ChildRecord[];
		try {
			siblings = home.manager.list();
		} catch {
			continue;
		}
		const label = sessionLabel(home);
		const active = siblings.filter(isActive).sort((a, b) => b.createdAt - a.createdAt);
		for (const child of active) out.push({ child, siblings, session: home.key, label });
	}
	return out;
}

/** Cancel one child of another session in its own home; an unknown session or id is said, not ignored. */
export async function cancelOther(
	homes: Iterable<OtherHome>,
	session: string,
	id: string,
	reason?: string,
): Promise<void> {
	for (const home of homes) {
		if (home.key !== session) continue;
		if (!home.manager.list().some((c) => c.id === id)) break;
		await home.manager.cancel([id], reason);
		return;
	}
	throw new Error(`${id} of that session is no longer known`);
}

/**
 * The widget's line for other sessions' children: counted apart from this session's, or none. Those that wait for
 * their parent's answer (ask_parent) are counted apart too, as asking their own session ("1 asks its session"):
 * the question is answered there, not here.
 */
export function othersWidgetLine(others: readonly OtherChild[], paint: Paint = (_c, t) => t): string | undefined {
	if (others.length === 0) return undefined;
	const live = others.filter((o) => o.child.state === "running" || o.child.state === "starting");
	const asking = live.filter((o) => o.child.question).length;
	const running = live.length - asking;
	const queued = others.filter((o) => o.child.state === "queued").length;
	const waiting = others.filter((o) => o.child.state === "waiting").length;
	const sessions = new Set(others.map((o) => o.session)).size;
	const counts = [
		`${running} running`,
		queued > 0 ? `${queued} queued` : "",
		waiting > 0 ? `${waiting} waiting` : "",
		asking > 0 ? askingCount(asking, true) : "",
	]
		.filter(Boolean)
		.join(", ");
	const where = sessions === 1 ? otherTag(others[0].label) : `${sessions} other sessions`;
	return paint("muted", `○ ${where}: ${counts} · /subagents`);
}
