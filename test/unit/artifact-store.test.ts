import { createHash } from "node:crypto";
import {
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	ARTIFACT_KINDS,
	ArtifactStore,
	type PutResult,
	STALE_TEMP_MS,
	storeForAgentDir,
	WRITE_CHUNK_BYTES,
} from "../../extensions/shared/store/artifact-store.ts";
import { textArb } from "./projection-arbitraries.ts";
import { ageFile, DAY_MS, HOUR_MS, mustPut, useTempStore } from "./store-fixture.ts";

const tmp = useTempStore("artifact-store");

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const mode = (path: string) => statSync(path).mode & 0o777;

describe("ArtifactStore.put", () => {
	it("stores exactly the UTF-8 bytes under <agentDir>/cache/headroom/<kind>/<sha256>.txt", async () => {
		const text = "héllo\r\n\0\x1b[1mworld 😀\n";
		const r = mustPut(await tmp.store.put("tool-outputs", text));
		expect(tmp.store.root).toBe(join(tmp.agentDir, "cache", "headroom"));
		expect(tmp.store.dirFor("tool-outputs")).toBe(join(tmp.store.root, "tool-outputs"));
		const bytes = readFileSync(r.path);
		expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
		expect(r.path).toBe(join(tmp.store.dirFor("tool-outputs"), `${sha(bytes)}.txt`));
		expect(r).toMatchObject({ sha256: sha(bytes), bytes: bytes.length, reused: false });
		expect(storeForAgentDir(tmp.agentDir).root).toBe(tmp.store.root);
	});

	it("stores any text byte-exact, named by the SHA-256 of the stored bytes (lone surrogates as U+FFFD)", () => {
		fc.assert(
			fc.property(textArb, fc.constantFrom(...ARTIFACT_KINDS), (text, kind) => {
				const r = mustPut(tmp.store.putSync(kind, text));
				const bytes = readFileSync(r.path);
				expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
				expect(r.sha256).toBe(sha(bytes));
			}),
			{ numRuns: 60 },
		);
	});

	it("encodes across write chunks without splitting a surrogate pair", async () => {
		const n = WRITE_CHUNK_BYTES;
		const texts = [
			`${"a".repeat(n - 1)}😀z`, // a pair across the first slice's end
			`${"a".repeat(n - 1)}\ud800z`, // a lone surrogate there
			`${"a".repeat(n - 2)}😀😀z`, // a pair that does not fit the buffer's last bytes
			`${"中".repeat(n / 2)}😀`, // the buffer fills mid-slice, 3 bytes per unit
			`${"é".repeat(n)}\udc00${"😀".repeat(n / 4)}`,
		];
		for (const text of texts) {
			const r = mustPut(await tmp.store.put("transcripts", text));
			expect(readFileSync(r.path).equals(Buffer.from(text, "utf8"))).toBe(true);
			expect(r.sha256).toBe(sha(Buffer.from(text, "utf8")));
		}
	});

	it("makes directories 0700 and files 0600 whatever the umask", async () => {
		const previous = process.umask();
		try {
			for (const umask of [0o000, 0o022, 0o277]) {
				rmSync(join(tmp.agentDir, "cache"), { recursive: true, force: true });
				process.umask(umask);
				const r = mustPut(umask === 0o022 ? tmp.store.putSync("handoffs", "x") : await tmp.store.put("handoffs", "x"));
				expect(mode(r.path)).toBe(0o600);
				for (const dir of [join(tmp.agentDir, "cache"), tmp.store.root, tmp.store.dirFor("handoffs")])
					expect(mode(dir)).toBe(0o700);
			}
		} finally {
			process.umask(previous);
		}
	});

	it("tightens an existing store directory that is too open", async () => {
		mkdirSync(tmp.store.dirFor("tool-outputs"), { recursive: true, mode: 0o755 });
		mustPut(await tmp.store.put("tool-outputs", "x"));
		expect(mode(tmp.store.root)).toBe(0o700);
		expect(mode(tmp.store.dirFor("tool-outputs"))).toBe(0o700);
	});

	it("reuses an identical, verified file and refreshes its age", async () => {
		const first = mustPut(await tmp.store.put("tool-outputs", "same"));
		ageFile(first.path, 40 * DAY_MS);
		const second = mustPut(tmp.store.putSync("tool-outputs", "same"));
		expect(second).toEqual({ ...first, reused: true });
		expect(Date.now() - statSync(first.path).mtimeMs).toBeLessThan(HOUR_MS);
		expect(readdirSync(tmp.store.dirFor("tool-outputs"))).toEqual([`${first.sha256}.txt`]); // no temp left
	});

	it("rejects an unknown kind or a non-string without throwing", async () => {
		expect(await tmp.store.put("../etc" as never, "x")).toMatchObject({
			ok: false,
			error: expect.stringMatching(/kind/),
		});
		expect(tmp.store.putSync("tool-outputs", 42 as never)).toMatchObject({
			ok: false,
			error: expect.stringMatching(/string/),
		});
	});
});

describe("ArtifactStore.resolve", () => {
	it("finds an artifact by full id or unique prefix of 8+ hex characters", async () => {
		const r = mustPut(await tmp.store.put("subagent-results", "report"));
		for (const id of [r.sha256, r.sha256.slice(0, 8), r.sha256.slice(0, 20).toUpperCase()]) {
			expect(tmp.store.resolve(id)).toEqual({ ok: true, path: r.path, sha256: r.sha256, kind: "subagent-results" });
		}
		expect(tmp.store.resolve(r.sha256, "tool-outputs")).toMatchObject({
			ok: false,
			error: expect.stringMatching(/no artifact/),
		});
	});

	it("refuses paths, short or non-hex ids, and reports ambiguity", () => {
		for (const id of ["../../etc/passwd", "abc", "g".repeat(10), "/abs/path", `${"a".repeat(64)}0`]) {
			expect(tmp.store.resolve(id)).toMatchObject({ ok: false, error: expect.stringMatching(/invalid artifact id/) });
		}
		const dir = tmp.store.dirFor("tool-outputs");
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		writeFileSync(join(dir, `${"c".repeat(8)}${"0".repeat(56)}.txt`), "a");
		writeFileSync(join(dir, `${"c".repeat(8)}${"1".repeat(56)}.txt`), "b");
		expect(tmp.store.resolve("cccccccc")).toMatchObject({ ok: false, error: expect.stringMatching(/ambiguous/) });
		expect(tmp.store.resolve("cccccccc0")).toMatchObject({ ok: true });
	});

	it("does not follow a symlink planted under an artifact name", () => {
		const dir = tmp.store.dirFor("tool-outputs");
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		writeFileSync(join(tmp.agentDir, "secret"), "s");
		symlinkSync(join(tmp.agentDir, "secret"), join(dir, `${"d".repeat(64)}.txt`));
		expect(tmp.store.resolve("dddddddd")).toMatchObject({ ok: false });
	});
});

describe("ArtifactStore.stats and prune", () => {
	async function fill() {
		const made: Record<string, PutResult> = {};
		for (const [name, kind, days] of [
			["ancient", "tool-outputs", 60],
			["old", "subagent-results", 20],
			["week", "tool-outputs", 7],
			["fresh", "handoffs", 0.1],
		] as const) {
			made[name] = mustPut(await tmp.store.put(kind, `${name} `.repeat(1000)));
			ageFile(made[name].path, days * DAY_MS);
		}
		return made;
	}

	it("counts artifacts by kind with the newest", async () => {
		const made = await fill();
		const s = await tmp.store.stats();
		const total = Object.values(made).reduce((sum, r) => sum + r.bytes, 0);
		expect(s).toMatchObject({ count: 4, bytes: total, newest: { path: made.fresh.path } });
		expect(s.byKind["tool-outputs"]).toEqual({ count: 2, bytes: made.ancient.bytes + made.week.bytes });
		expect(s.byKind.transcripts).toEqual({ count: 0, bytes: 0 });
		expect(await new ArtifactStore({ agentDir: join(tmp.agentDir, "none") }).stats()).toMatchObject({
			count: 0,
			bytes: 0,
		});
	});

	it("prunes by age, then by total size oldest first, never files younger than minAgeHours", async () => {
		const made = await fill();
		const byAge = await tmp.store.prune({ maxAgeDays: 30 });
		expect(byAge).toEqual({ removed: 1, freedBytes: made.ancient.bytes });
		const bySize = await tmp.store.prune({ maxTotalBytes: made.week.bytes + made.fresh.bytes });
		expect(bySize).toEqual({ removed: 1, freedBytes: made.old.bytes });
		const all = await tmp.store.prune({ maxTotalBytes: 0 });
		expect(all).toEqual({ removed: 1, freedBytes: made.week.bytes });
		expect(readdirSync(tmp.store.dirFor("handoffs"))).toEqual([`${made.fresh.sha256}.txt`]);
		expect(await tmp.store.prune({ maxTotalBytes: 0, minAgeHours: 0 })).toEqual({
			removed: 1,
			freedBytes: made.fresh.bytes,
		});
	});

	it("removes stale temp files from killed writers but not a write in progress", async () => {
		const dir = tmp.store.dirFor("tool-outputs");
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		const stale = join(dir, ".tmp-123-00aa.part");
		const active = join(dir, ".tmp-456-11bb.part");
		writeFileSync(stale, "partial");
		writeFileSync(active, "writing");
		ageFile(stale, STALE_TEMP_MS + 60_000);
		expect(await tmp.store.prune()).toEqual({ removed: 1, freedBytes: 7 });
		expect(readdirSync(dir)).toEqual([".tmp-456-11bb.part"]);
	});

	it("never follows or removes through a planted symlink, and reports an unsafe directory", async () => {
		const outside = mkdtempSync(join(tmpdir(), "headroom-outside-"));
		try {
			const victim = join(outside, `${"e".repeat(64)}.txt`);
			writeFileSync(victim, "keep me");
			ageFile(victim, 90 * DAY_MS);
			const dir = tmp.store.dirFor("tool-outputs");
			mkdirSync(dir, { recursive: true, mode: 0o700 });
			symlinkSync(victim, join(dir, `${"e".repeat(64)}.txt`));
			symlinkSync(outside, tmp.store.dirFor("transcripts"));
			expect(await tmp.store.prune({ maxAgeDays: 1, maxTotalBytes: 0, minAgeHours: 0 })).toEqual({
				removed: 0,
				freedBytes: 0,
			});
			expect(readFileSync(victim, "utf8")).toBe("keep me");
			expect(lstatSync(join(dir, `${"e".repeat(64)}.txt`)).isSymbolicLink()).toBe(true);
			const s = await tmp.store.stats();
			expect(s.count).toBe(0);
			expect(s.problems?.join("\n")).toMatch(/transcripts is a symlink/);
		} finally {
			rmSync(outside, { recursive: true, force: true });
		}
	});
});
