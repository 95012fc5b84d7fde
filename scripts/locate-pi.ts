/**
 * The running Pi's modules for the built entries (dist/<name>.js), without a bare import.
 *
 * Pi's loader maps `@mariozechner/pi-coding-agent`, `@mariozechner/pi-ai`, `@mariozechner/pi-tui` and `typebox`
 * to its own modules (jiti aliases). An entry that imports them by name cannot be imported natively from the
 * package's folder, so jiti falls back to Babel and transpiles it (on a cold start Pi 1.x loads Babel for
 * that alone: docs/startup.md). The entries therefore import nothing by name; instead, when Pi calls an
 * entry's factory, the entry hands over an Error made in that call, whose stack names Pi's loader module
 * (`<Pi>/dist/core/extensions/loader.js` on both lines). From it this module finds Pi's package folder and
 * imports, by absolute file URL, the same files Pi's loader aliases the names to. They are already loaded in
 * the running process (Pi imported them itself), so the import returns the instances Pi uses.
 *
 * Fallbacks, in order: the main script (`process.argv[1]`, Pi's cli.js); then the entry's own `import(id)`,
 * which Pi's loader routes through its aliases or virtual modules when it transpiled the entry (a compiled
 * Pi binary, whose files are not on disk). Transformed by scripts/build.ts into dist/extensions.js.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The names Pi's SDK is published under (0.73 and earlier; 1.x). */
export const PI_PACKAGES = ["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent"] as const;

/** A Pi installation: its package folder and the scope its sibling packages are published under. */
export interface PiInstall {
	root: string;
	scope: string;
}

/** Absolute file paths named in a stack trace (file URLs and plain paths, POSIX and Windows), in order. */
export function stackFiles(stack: string): string[] {
	const files: string[] = [];
	for (const match of stack.matchAll(/(file:\/\/\/?[^\s()]+?|\/[^\s():]+|[A-Za-z]:\\[^\s():]+):\d+(?::\d+)?/g)) {
		const location = match[1];
		try {
			files.push(location.startsWith("file:") ? fileURLToPath(location) : location);
		} catch {
			// not a usable file URL
		}
	}
	return files;
}

/** The Pi package folder `file` belongs to, or undefined. */
export function piInstallOf(file: string): PiInstall | undefined {
	let dir: string;
	try {
		dir = dirname(realpathSync(file));
	} catch {
		return undefined;
	}
	for (;;) {
		const manifest = join(dir, "package.json");
		if (existsSync(manifest)) {
			try {
				const name = (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name;
				if ((PI_PACKAGES as readonly unknown[]).includes(name))
					return { root: dir, scope: (name as string).split("/")[0] };
				// A package's own folder that is not Pi: stop at the first package.json that names a package.
				if (typeof name === "string") return undefined;
			} catch {
				return undefined;
			}
		}
		const parent = dirname(dir);
		if (parent === dir) return undefined;
		dir = parent;
	}
}

/** The running Pi: the first Pi package named by the caller's stack, else the main script's. */
export function locatePi(
	stack: string | undefined,
	main: string | undefined = process.argv[1],
	installOf: (file: string) => PiInstall | undefined = piInstallOf,
): PiInstall | undefined {
	for (const file of [...stackFiles(stack ?? ""), ...(main ? [main] : [])]) {
		const found = installOf(file);
		if (found) return found;
	}
	return undefined;
}

/** A package's entry for `subpath` ("." or "./x") from its exports (import conditions) or main. */
function packageEntry(folder: string, subpath: string): string | undefined {
	const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
		exports?: unknown;
		main?: string;
	};
	const pick = (target: unknown): string | undefined => {
		if (typeof target === "string") return target;
		if (target && typeof target === "object")
			for (const condition of ["import", "node", "default"]) {
				const found = pick((target as Record<string, unknown>)[condition]);
				if (found) return found;
			}
		return undefined;
	};
	const { exports } = manifest;
	if (exports !== undefined) {
		const map = exports as Record<string, unknown>;
		const keyed = typeof exports === "object" && exports !== null && Object.keys(map).some((k) => k.startsWith("."));
		const target = pick(keyed ? map[subpath] : subpath === "." ? exports : undefined);
		return target ? join(folder, target) : undefined;
	}
	if (subpath !== ".") return join(folder, subpath);
	return join(folder, manifest.main ?? "index.js");
}

/** Node's lookup of `name` (a package, maybe with a subpath) from `from`, by its import conditions. */
export function resolveFrom(from: string, name: string): string | undefined {
	const parts = name.split("/");
	const pkg = name.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
	const subpath = name === pkg ? "." : `.${name.slice(pkg.length)}`;
	for (let dir = from; ; dir = dirname(dir)) {
		const folder = join(dir, "node_modules", pkg);
		if (existsSync(join(folder, "package.json"))) return packageEntry(folder, subpath);
		if (dirname(dir) === dir) return undefined;
	}
}

/**
 * The file Pi's loader maps a module name to (its `getAliases()`, 0.73.1 and 1.x): the SDK's own index; on
 * 1.x pi-ai's root is the loader's extension view (compat API plus TypeBox); TypeBox by require resolution
 * from Pi's folder, the other packages by import resolution.
 */
export function piModuleFile(pi: PiInstall, id: string): string | undefined {
	const loaderDir = join(pi.root, "dist", "core", "extensions");
	if ((PI_PACKAGES as readonly string[]).includes(id)) return join(pi.root, "dist", "index.js");
	const [scope, ...rest] = id.split("/");
	if (scope === "typebox" || scope === "@sinclair") {
		const bare = scope === "@sinclair" ? rest.join("/") : id;
		try {
			return createRequire(join(loaderDir, "loader.js")).resolve(bare);
		} catch {
			return resolveFrom(pi.root, bare);
		}
	}
	if (scope === "@mariozechner" || scope === "@earendil-works") {
		const own = `${pi.scope}/${rest.join("/")}`;
		if (own === `${pi.scope}/pi-ai`) {
			const view = join(loaderDir, "pi-ai-extension-view.js");
			if (existsSync(view)) return view;
		}
		return resolveFrom(pi.root, own);
	}
	return undefined;
}

/**
 * What one process has found already (the package's five entries each ask for the same modules): the Pi
 * install of each stack file, the file of each module of an install, and each module's import. A file's
 * install, and the module a file URL names, do not change while the process runs.
 */
const installOfFile = new Map<string, PiInstall | undefined>();
const moduleFileOf = new Map<string, string | undefined>();
const importOf = new Map<string, Promise<unknown>>();

function cachedInstallOf(file: string): PiInstall | undefined {
	if (!installOfFile.has(file)) installOfFile.set(file, piInstallOf(file));
	return installOfFile.get(file);
}

/** The existing file Pi's loader maps `id` to, or undefined. */
function cachedModuleFile(pi: PiInstall, id: string): string | undefined {
	const key = `${pi.root}\0${id}`;
	if (!moduleFileOf.has(key)) {
		const file = piModuleFile(pi, id);
		moduleFileOf.set(key, file && existsSync(file) ? file : undefined);
	}
	return moduleFileOf.get(key);
}

function cachedImport(file: string): Promise<unknown> {
	const url = pathToFileURL(file).href;
	let loaded = importOf.get(url);
	if (!loaded) {
		loaded = import(url);
		importOf.set(url, loaded);
	}
	return loaded;
}

/**
 * The running Pi's modules `ids`, imported by file URL from the Pi the caller's stack names; `fallback` (the
 * entry's own `import`) for any module not located that way. What was found for an earlier entry is reused.
 */
export async function piModules(
	ids: readonly string[],
	caller: Error,
	fallback: (id: string) => Promise<unknown>,
): Promise<Record<string, unknown>> {
	const pi = locatePi(caller.stack, process.argv[1], cachedInstallOf);
	const loaded = await Promise.all(
		ids.map((id) => {
			const file = pi && cachedModuleFile(pi, id);
			return file ? cachedImport(file) : fallback(id);
		}),
	);
	return Object.fromEntries(ids.map((id, i) => [id, loaded[i]]));
}
