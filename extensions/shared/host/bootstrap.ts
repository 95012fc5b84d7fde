/**
 * The one extension bootstrap. Every extension of the package starts with `bootExtension(pi, name)`
 * and gets the same services, set up the same way:
 *
 * - **Configuration, one reload policy**: `<agentDir>/headroom.json` and (when the user trusted the project,
 *   ./trust.ts) `<project>/.pi/headroom.json` are read at every `session_start` — a new, resumed or forked session,
 *   and after `/reload` — and on first use when an event comes before any session_start. Between two
 *   session starts the configuration is fixed, so one session runs under one configuration.
 * - **Warnings once**: each configuration warning names its file and key and is shown once per
 *   process, however many of the package's extensions are loaded (they share the seen set).
 * - **The artifact store** under `<agentDir>/cache/headroom/`, and its background prune, scheduled at
 *   most once per process after a session starts.
 * - **The notifier**: the UI when there is one (TUI, rpc's UI bridge), else stderr — print and json
 *   modes keep stdout for the answer.
 * - **The fingerprint** (xxhash-wasm) started, and awaited at session start, so hooks that key caches
 *   by it run synchronously from the first call.
 *
 * Pi-line differences live in ./pi-host.ts; this module only composes them.
 */
import { type ExtensionAPI, type ExtensionContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import { type ArtifactStore, storeForAgentDir } from "../store/artifact-store.ts";
import { scheduleBackgroundPrune } from "../store/background-prune.ts";
import { fingerprintReady } from "../text/fingerprint.ts";
import { DEFAULT_CONFIG, type HeadroomConfig, loadConfig, unseenConfigWarnings } from "./config.ts";
import { hasUI } from "./pi-host.ts";
import { folderTrust, type TrustDecision, untrustedHint } from "./trust.ts";

/** How loud a notice is (Pi's notify levels). */
export type NoticeLevel = "info" | "warning" | "error";

/** The services one extension gets from the bootstrap. */
export interface ExtensionHost {
	/** The extension's name, as notices are prefixed with it ("context-trim"). */
	readonly name: string;
	/**
	 * The configuration of the current session: read at session_start, or now when nothing was read yet
	 * and `ctx` is given; the defaults before that.
	 */
	config(ctx?: ExtensionContext): HeadroomConfig;
	/** Re-read the configuration now (what session_start does); warnings not shown yet are shown. */
	reload(ctx: ExtensionContext): HeadroomConfig;
	/** Called with every configuration read (session_start, or first use), after warnings were shown. */
	onConfig(listener: (config: HeadroomConfig, ctx: ExtensionContext) => void): void;
	/**
	 * Whether this session's project files take effect (./trust.ts), as decided at the last configuration read;
	 * decided now when nothing was read yet and `ctx` is given.
	 */
	trust(ctx?: ExtensionContext): TrustDecision;
	/** Pi's agent dir (`PI_CODING_AGENT_DIR` or ~/.pi/agent), as Pi resolves it now. */
	agentDir(): string;
	/** The artifact store of the agent dir (one object per agent dir; never throws: failures surface on use). */
	store(): ArtifactStore;
	/** Tell the person `<name>: text`: in the UI when there is one, else on stderr. */
	notify(ctx: ExtensionContext | undefined, text: string, level?: NoticeLevel): void;
	/** notify, at most once per distinct text in this extension instance. */
	notifyOnce(ctx: ExtensionContext | undefined, text: string, level?: NoticeLevel): void;
}

/** Where a notice goes: the UI when there is one, else stderr (never stdout: print/json modes own it). */
export function tellPerson(ctx: ExtensionContext | undefined, text: string, level: NoticeLevel = "warning"): void {
	if (ctx && hasUI(ctx)) {
		try {
			ctx.ui.notify(text, level);
			return;
		} catch {
			// A UI that went away (session replaced): fall through to stderr.
		}
	}
	console.error(text);
}

/** Prefix of configuration warnings, whichever extension shows them. */
export const CONFIG_WARNING_PREFIX = "headroom config: ";

/** One reading of the configuration files and the trust decision. */
interface Reading {
	agentDir: string;
	cwd: string;
	trust: TrustDecision;
	loaded: ReturnType<typeof loadConfig>;
}

/**
 * The reading of each session_start emission, by its event object: Pi hands every handler of one emission the
 * same event (checked on 0.73.1 and 1.6.0: `ExtensionRunner.emit`), and the package's extensions of one load share
 * this module (one evaluation per load, docs/startup.md), so the first extension's reading serves the other four
 * instead of five trust-store look-ups (each takes Pi's trust-file lock) and five configuration reads. A later
 * session_start is another event: read afresh. Where each extension has its own module instance (the TypeScript
 * source under jiti) nothing is shared and each reads for itself, as before.
 */
const readings = new WeakMap<object, Reading>();

function sharedReading(emission: object | undefined, agentDir: string, cwd: string): Reading | undefined {
	const reading = emission ? readings.get(emission) : undefined;
	return reading && reading.agentDir === agentDir && reading.cwd === cwd ? reading : undefined;
}

/**
 * The reading each session_start's context was given, by the context object: Pi makes a fresh context for every
 * emission (`ExtensionRunner.createContext()`, 0.73.1 and 1.6.0), so the object names that session_start.
 */
const readingOfContext = new WeakMap<object, Reading>();

/**
 * The trust decision for `cwd` under `agentDir`: the one the configuration reading of `ctx`'s session_start made
 * when it was made for the same folders (so a handler of that emission does not take Pi's trust-file lock
 * again), else decided now (./trust.ts folderTrust).
 */
export function sessionTrust(agentDir: string, cwd: string, ctx?: ExtensionContext): TrustDecision {
	const reading = ctx ? readingOfContext.get(ctx) : undefined;
	if (reading && reading.agentDir === agentDir && reading.cwd === cwd) return reading.trust;
	return folderTrust(agentDir, cwd, ctx);
}

function readConfig(agentDir: string, ctx: ExtensionContext, emission: object | undefined): Reading {
	const trust = folderTrust(agentDir, ctx.cwd, ctx);
	const loaded = loadConfig({
		agentDir,
		cwd: ctx.cwd,
		projectTrusted: trust.trusted,
		untrustedHint: untrustedHint(trust),
	});
	const reading = { agentDir, cwd: ctx.cwd, trust, loaded };
	if (emission) readings.set(emission, reading);
	return reading;
}

/** Boot one extension: register the session_start reload and return its services. */
export function bootExtension(pi: ExtensionAPI, name: string): ExtensionHost {
	let config: HeadroomConfig | undefined;
	let trust: TrustDecision | undefined;
	let store: { agentDir: string; store: ArtifactStore } | undefined;
	const listeners: Array<(config: HeadroomConfig, ctx: ExtensionContext) => void> = [];
	const told = new Set<string>();
	void fingerprintReady();

	/** Read the configuration (and the trust decision) for ctx; `emission` shares one reading per session_start. */
	const read = (ctx: ExtensionContext, emission?: object): HeadroomConfig => {
		const agentDir = getAgentDir();
		const reading = sharedReading(emission, agentDir, ctx.cwd) ?? readConfig(agentDir, ctx, emission);
		if (emission) readingOfContext.set(ctx, reading);
		trust = reading.trust;
		// A reading kept for the emission's other extensions: each its own copy, as when it read the files itself
		// (the configuration is plain data).
		const loaded: HeadroomConfig = emission ? structuredClone(reading.loaded.config) : reading.loaded.config;
		config = loaded;
		for (const warning of unseenConfigWarnings(reading.loaded.warnings))
			tellPerson(ctx, `${CONFIG_WARNING_PREFIX}${warning}`);
		scheduleBackgroundPrune(agentDir, loaded.store);
		for (const listener of listeners) listener(loaded, ctx);
		return loaded;
	};

	const host: ExtensionHost = {
		name,
		config: (ctx) => config ?? (ctx ? host.reload(ctx) : DEFAULT_CONFIG),
		reload: (ctx) => read(ctx),
		trust(ctx) {
			if (!trust && ctx) host.reload(ctx);
			return trust ?? { trusted: false, reason: "undecided" };
		},
		onConfig: (listener) => {
			listeners.push(listener);
		},
		agentDir: () => getAgentDir(),
		store() {
			const agentDir = getAgentDir();
			if (store?.agentDir !== agentDir) store = { agentDir, store: storeForAgentDir(agentDir) };
			return store.store;
		},
		notify: (ctx, text, level) => tellPerson(ctx, `${name}: ${text}`, level),
		notifyOnce(ctx, text, level) {
			if (told.has(text)) return;
			told.add(text);
			host.notify(ctx, text, level);
		},
	};

	// The one reload policy. Registered first, so it runs before the extension's own session_start handlers.
	pi.on("session_start", async (event, ctx) => {
		read(ctx, event);
		await fingerprintReady();
	});
	return host;
}
