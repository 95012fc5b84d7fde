/**
 * The set-up the artifact-store tests share: a fresh agent dir and store per test, removed after it,
 * and the small helpers they all use (file ages, successful puts).
 */
import { mkdirSync, rmSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, expect } from "vitest";
import { ArtifactStore, type PutResult } from "../../extensions/shared/store/artifact-store.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

export const HOUR_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * HOUR_MS;

/** The agent dir and store of the running test. */
export interface TempStore {
	readonly agentDir: string;
	readonly store: ArtifactStore;
}

/**
 * A new agent dir (`makeTestDir(label)`) and an ArtifactStore on it before each test, removed after each;
 * `around` runs first in both hooks (e.g. to reset process-wide state the store's users keep).
 */
export function useTempStore(label: string, around?: () => void): TempStore {
	let current: { agentDir: string; store: ArtifactStore } | undefined;
	beforeEach(() => {
		around?.();
		const agentDir = makeTestDir(label);
		current = { agentDir, store: new ArtifactStore({ agentDir }) };
	});
	afterEach(() => {
		around?.();
		if (current) rmSync(current.agentDir, { recursive: true, force: true });
		current = undefined;
	});
	const now = () => {
		if (!current) throw new Error("useTempStore: used outside a test");
		return current;
	};
	return {
		get agentDir() {
			return now().agentDir;
		},
		get store() {
			return now().store;
		},
	};
}

/** Set a file's access and modification times `ms` into the past. */
export function ageFile(path: string, ms: number): void {
	const t = new Date(Date.now() - ms);
	utimesSync(path, t, t);
}

/** Asserts a put succeeded and returns it. */
export function mustPut(result: unknown): PutResult {
	expect(result).toMatchObject({ ok: true });
	return result as PutResult;
}

/**
 * One folder and store for a whole test file: `makeTestDir(label)` with the store's agent dir `agent/` in it,
 * removed after the file's tests. The folder itself is free for the test's other files.
 */
export function fileStore(label: string): { dir: string; agentDir: string; store: ArtifactStore } {
	const dir = makeTestDir(label);
	afterAll(() => rmSync(dir, { recursive: true, force: true }));
	const agentDir = join(dir, "agent");
	mkdirSync(agentDir, { recursive: true });
	return { dir, agentDir, store: new ArtifactStore({ agentDir }) };
}
