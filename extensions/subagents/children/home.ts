/**
 * The process-wide home of a top-level session's children. Children belong to the session that spawned them,
 * not to an extension instance: `/new`, `/resume`, `/fork` and `/reload` replace the instance (Pi re-imports
 * the extension), so the manager lives here, keyed by the parent's session file (or id), under a global
 * Symbol.for key that every module instance finds. While an instance of that session is attached, the
 * children's records go into the session through it. While none is: after a switch to another session (the
 * session is no longer open in Pi), they go straight into its session file, so a result that settles then is on
 * disk at once, whatever ends the process later; during a reload (the same session stays open in Pi, whose
 * in-memory tree a direct write would fork), or when the session has no file yet, they wait here and are
 * written through the next instance, or into the file when the process ends.
 */
import { existsSync } from "node:fs";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import type { SubagentManager } from "./manager.ts";

/** Writes one custom entry into the parent's session. */
export type EntrySink = (customType: string, data: unknown) => void;

export interface SessionHome {
	/** The parent session's key (its file, or its id when it has none). */
	readonly key: string;
	/** The parent's session file, if it has one. */
	readonly sessionFile: string | undefined;
	readonly manager: SubagentManager;
	/** The session's name as its instance last saw it (set by the user, untrusted text), if any. */
	name: string | undefined;
	/** Record an entry: through the attached instance, or kept until one attaches (or the process ends). */
	record: EntrySink;
	/** An instance of the session took over: what waited is written through it first. */
	attach(sink: EntrySink): void;
	/**
	 * The instance went away. `away`: the session was switched away from (/new, /resume, /fork), so records go
	 * straight into its file from now on; otherwise (a reload) they wait for the next instance.
	 */
	detach(away?: boolean): void;
	/** Entries waiting for an instance. */
	waiting(): number;
	/** Write what waits straight into the session file (the process ends; no instance will attach). */
	flushToFile(): void;
}

const HOMES = Symbol.for("pi-context-headroom.subagents.homes");

/** Every home of this process, by session key (shared by every module instance of this extension). */
export function sessionHomes(): Map<string, SessionHome> {
	const g = globalThis as unknown as Record<symbol, Map<string, SessionHome> | undefined>;
	g[HOMES] ??= new Map();
	return g[HOMES];
}

/** The key of the context's session: its file, or its id for a session without one. */
export function sessionKey(ctx: ExtensionContext): string {
	let file: string | undefined;
	try {
		file = ctx.sessionManager.getSessionFile();
	} catch {
		file = undefined;
	}
	if (file) return file;
	try {
		return `id:${ctx.sessionManager.getSessionId()}`;
	} catch {
		return "id:?";
	}
}

/** The context session's name, if it has one (names are free text: sanitize before drawing). */
export function sessionNameOf(ctx: ExtensionContext): string | undefined {
	try {
		return ctx.sessionManager.getSessionName?.() || undefined;
	} catch {
		return undefined;
	}
}

export function createSessionHome(key: string, sessionFile: string | undefined, manager: SubagentManager): SessionHome {
	let sink: EntrySink | undefined;
	/** The session file, opened while the session is switched away from (records go straight into it). */
	let away: SessionManager | undefined;
	let switchedAway = false;
	const waiting: Array<[string, unknown]> = [];
	const write = (to: EntrySink, type: string, data: unknown) => {
		try {
			to(type, data);
		} catch (error) {
			console.error(`subagents: could not record ${type} in the session: ${String(error)}`);
		}
	};
	/** Append to the file of a session no longer open in Pi; false when it cannot be (kept waiting then). */
	const writeAway = (type: string, data: unknown): boolean => {
		if (!sessionFile || !existsSync(sessionFile)) return false;
		try {
			away ??= SessionManager.open(sessionFile);
			away.appendCustomEntry(type, data);
			return true;
		} catch (error) {
			away = undefined;
			console.error(`subagents: could not record ${type} in ${sessionFile}: ${String(error)}`);
			return false;
		}
	};
	return {
		key,
		sessionFile,
		manager,
		name: undefined,
		record(type, data) {
			if (sink) write(sink, type, data);
			else if (!(switchedAway && waiting.length === 0 && writeAway(type, data))) waiting.push([type, data]);
		},
		attach(next) {
			sink = next;
			switchedAway = false;
			away = undefined; // Pi reads the file afresh when it opens the session again
			for (const [type, data] of waiting.splice(0)) write(next, type, data);
		},
		detach(switched) {
			sink = undefined;
			switchedAway = switched === true;
		},
		waiting: () => waiting.length,
		flushToFile() {
			if (waiting.length === 0 || !sessionFile) return;
			try {
				const file = away ?? SessionManager.open(sessionFile);
				for (const [type, data] of waiting.splice(0)) file.appendCustomEntry(type, data);
			} catch (error) {
				console.error(`subagents: could not record results in ${sessionFile}: ${String(error)}`);
			}
		},
	};
}
