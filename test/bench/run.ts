/**
 * `npm run bench`: runs every test/bench/*.bench.ts in its own Node process, one after another,
 * so one benchmark's heap and JIT state never colour another's figures. Pass names to filter:
 * `npm run bench -- projection tokens` (whole names: `notable` runs notable.bench.ts alone, not notable-corpus).
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const all = readdirSync(here)
	.filter((name) => name.endsWith(".bench.ts"))
	.sort();
const names = all.map((name) => name.slice(0, -".bench.ts".length));
const unknown = filters.filter((f) => !names.includes(f));
if (unknown.length > 0) {
	console.error(`no benchmark named ${unknown.join(", ")}; there are: ${names.join(", ")}`);
	process.exit(2);
}
const files = all.filter((_, i) => filters.length === 0 || filters.includes(names[i]));
let failed = 0;
for (const name of files) {
	console.log(`\n=== ${name} ===`);
	const result = spawnSync(process.execPath, ["--expose-gc", "--import", "jiti/register", join(here, name)], {
		stdio: "inherit",
	});
	if (result.status !== 0) failed++;
}
if (failed > 0) {
	console.error(`${failed} benchmark(s) failed`);
	process.exit(1);
}
