/**
 * Context bytes a replayed session of tool outputs costs with Pi's built-in truncation alone vs. with
 * the tool-artifacts extension (fallback-excerpt mode: no summary model), and how many planted facts
 * (start / middle / end of each output) stay visible in context or are recoverable with one call.
 *
 * "Recoverable with one call": the omitted text is stored at a place the context names and one call
 * returns the fact — for the extension, recall_artifact(id, pattern) run against the stored artifact
 * (or, for a read, the file itself: the stub keeps Pi's "Use offset=N" notice); for Pi alone, bash's
 * full-output file or the re-readable source file of a read. Outputs cut by Pi's
 * grep/find limits are stored nowhere, so what they dropped is lost in both modes.
 *
 * Run: node --import jiti/register test/bench/tool-artifacts.bench.ts   (or: npm run bench -- tool-artifacts)
 */
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { truncateHead, truncateTail } from "@mariozechner/pi-coding-agent";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { buildStub, thresholdFor } from "../../extensions/tool-artifacts/artifacts.ts";
import { compilePattern, searchStored } from "../../extensions/tool-artifacts/recall.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { generateSession, type SessionOutput } from "../fixtures/tool-outputs/session.ts";

/** Pi's grep, find and ls result limits (their DEFAULT_LIMIT); the model in this session asked grep for 5000. */
const PI_FIND_LIMIT = 1000;

/** What Pi's own tool returns for an output, and where (if anywhere) the rest is kept. */
interface PiView {
	text: string;
	details?: Record<string, unknown>;
	/** Text of the place the context names that holds everything (bash temp file, the read file), if any. */
	recoverableFrom?: string;
}

function piView(out: SessionOutput, tmp: string): PiView {
	if (out.tool === "bash") {
		const t = truncateTail(out.full);
		if (!t.truncated) return { text: out.full };
		const path = join(tmp, `pi-bash-${randomBytes(8).toString("hex")}.log`);
		writeFileSync(path, out.full);
		const start = t.totalLines - t.outputLines + 1;
		return {
			text: `${t.content}\n\n[Showing lines ${start}-${t.totalLines} of ${t.totalLines}. Full output: ${path}]`,
			details: { truncation: t, fullOutputPath: path },
			recoverableFrom: out.full,
		};
	}
	if (out.tool === "read") {
		const t = truncateHead(out.full);
		if (!t.truncated) return { text: out.full, recoverableFrom: out.full };
		const next = t.outputLines + 1;
		return {
			text: `${t.content}\n\n[Showing lines 1-${t.outputLines} of ${t.totalLines}. Use offset=${next} to continue.]`,
			recoverableFrom: out.full,
		};
	}
	if (out.tool === "grep" || out.tool === "find") {
		const lines = out.full.split("\n");
		const limited = out.tool === "find" ? lines.slice(0, PI_FIND_LIMIT).join("\n") : out.full;
		const t = truncateHead(limited, { maxLines: Number.MAX_SAFE_INTEGER });
		const dropped = t.truncated || limited.length < out.full.length;
		return { text: dropped ? `${t.content}\n\n[results limit reached]` : out.full };
	}
	return { text: out.full }; // extension tools (web_fetch) get no built-in truncation
}

const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const fmt = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

async function main() {
	const tmp = makeTestDir("ta-bench");
	const store = new ArtifactStore({ agentDir: join(tmp, "agent") });
	const config = {
		...DEFAULT_CONFIG.toolArtifacts,
		summary: { ...DEFAULT_CONFIG.toolArtifacts.summary, enabled: false },
	};
	const rows: string[] = [];
	const totals = { full: 0, pi: 0, ext: 0, piVisible: 0, extVisible: 0, piRecover: 0, extRecover: 0, facts: 0, ms: 0 };
	try {
		for (const out of generateSession()) {
			const pi = piView(out, tmp);
			const threshold = thresholdFor(out.tool, config);
			let extText = pi.text;
			let artifactPath: string | undefined;
			let id = "";
			const started = performance.now();
			if (threshold !== false && pi.text.length > threshold) {
				const built = await buildStub(
					{
						toolName: out.tool,
						toolCallId: out.label,
						input: out.input,
						content: [{ type: "text", text: pi.text }],
						details: pi.details,
						isError: false,
					},
					pi.text,
					{ store, config },
				);
				if ("notStored" in built) throw new Error(built.notStored);
				extText = built.text;
				id = built.id;
				artifactPath = built.path;
			}
			totals.ms += performance.now() - started;
			const marks: Array<{ piVisible: boolean; piRecover: boolean; extVisible: boolean; extRecover: boolean }> = [];
			for (const fact of out.facts) {
				const piVisible = pi.text.includes(fact);
				const piRecover = piVisible || (pi.recoverableFrom?.includes(fact) ?? false);
				const extVisible = extText.includes(fact);
				// A read's stub keeps Pi's "Use offset=N to continue" notice: the file stays one read away.
				const keepsReadNotice = out.tool === "read" && /Use offset=\d+ to continue/.test(extText);
				let extRecover = extVisible || (keepsReadNotice && (pi.recoverableFrom?.includes(fact) ?? false));
				if (!extRecover && artifactPath !== undefined) {
					const compiled = compilePattern(fact, false);
					// The same worker search recall_artifact runs.
					const found = compiled.ok ? await searchStored(artifactPath, id, fact, compiled.regex, 0) : undefined;
					// Only match lines count ("N:text"), not the header that repeats the pattern.
					extRecover =
						found?.ok === true &&
						found.text
							.split("\n")
							.slice(1)
							.some((line) => /^\d+:/.test(line) && line.includes(fact));
				}
				marks.push({ piVisible, piRecover, extVisible, extRecover });
			}
			const count = (k: keyof (typeof marks)[number]) => marks.filter((m) => m[k]).length;
			const where = (k: keyof (typeof marks)[number]) => marks.map((m) => (m[k] ? "✓" : "·")).join("");
			totals.full += bytes(out.full);
			totals.pi += bytes(pi.text);
			totals.ext += bytes(extText);
			totals.piVisible += count("piVisible");
			totals.extVisible += count("extVisible");
			totals.piRecover += count("piRecover");
			totals.extRecover += count("extRecover");
			totals.facts += 3;
			rows.push(
				`| ${out.label} | ${out.tool} | ${fmt(bytes(out.full))} | ${fmt(bytes(pi.text))} | ${fmt(bytes(extText))} | ${where("piVisible")} / ${where("extVisible")} | ${where("piRecover")} / ${where("extRecover")} |`,
			);
		}
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
	console.log("Facts: start/middle/end per output; ✓ = yes. Pi alone / with tool-artifacts.\n");
	console.log(
		"| output | tool | full bytes | Pi alone (bytes in context) | with tool-artifacts | visible | recoverable with one call |",
	);
	console.log("|---|---|--:|--:|--:|:-:|:-:|");
	for (const row of rows) console.log(row);
	console.log(
		`| **total** | | ${fmt(totals.full)} | ${fmt(totals.pi)} | ${fmt(totals.ext)} (${((totals.ext / totals.pi) * 100).toFixed(1)}%) | ${totals.piVisible} / ${totals.extVisible} of ${totals.facts} | ${totals.piRecover} / ${totals.extRecover} of ${totals.facts} |`,
	);
	console.log(`\nstub building (store write + excerpt), all outputs: ${totals.ms.toFixed(1)} ms`);
	if (totals.extRecover < totals.piRecover) {
		console.error("regression: the extension recovers fewer facts than Pi alone");
		process.exit(1);
	}
}

await main();
