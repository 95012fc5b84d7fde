/**
 * Loading a headroom.json as the extensions do: each call writes `value` into a fresh agent dir (one folder
 * per test file, removed after its tests) and returns loadConfig's configuration and warnings, and the file.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll } from "vitest";
import { CONFIG_FILE_NAME, loadConfig } from "../../extensions/shared/host/config.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

export function configLoader(label: string): (value: unknown) => ReturnType<typeof loadConfig> & { file: string } {
	const dir = makeTestDir(label);
	afterAll(() => rmSync(dir, { recursive: true, force: true }));
	let n = 0;
	return (value) => {
		const agentDir = join(dir, `agent-${n++}`);
		mkdirSync(agentDir);
		const file = join(agentDir, CONFIG_FILE_NAME);
		writeFileSync(file, JSON.stringify(value));
		return { ...loadConfig({ agentDir, cwd: join(agentDir, "none") }), file };
	};
}
