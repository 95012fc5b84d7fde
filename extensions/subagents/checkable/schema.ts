/**
 * Structured results: a child spawned with `output_schema` must end its answer with one JSON value that
 * validates against that JSON Schema. Validation is TypeBox's compiler (`typebox/compile`, which both Pi
 * lines map to their own TypeBox at run time) run on the plain JSON Schema; the schema itself is checked
 * once at spawn time by the same compiler against a meta-schema of the keywords TypeBox evaluates, so a
 * typo ("requried") or a keyword it would silently ignore is a clear error instead of a schema that
 * accepts anything.
 */
import { Compile } from "typebox/compile";
import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import { utf8Length } from "../../shared/text/tokens.ts";
import { patternProbeFailed, patternTimedOut } from "../prompt/checkable.ts";
import { probePatterns, schemaEntries, schemaPatterns, valueStrings } from "./pattern-probe.ts";

/** Largest output_schema accepted, in UTF-8 bytes of its JSON (it is shown to the child in full). */
export const OUTPUT_SCHEMA_MAX_BYTES = SURFACES["subagents.outputSchema"].maxBytes;
/** Entries of the validator errors quoted to the child and to the parent: the first errors, then a count of the rest. */
export const SCHEMA_ERRORS_SHOWN = SURFACES["subagents.schemaErrors"].maxLines;
/** Longest quoted validator error, in UTF-8 bytes (mark included). */
export const SCHEMA_ERROR_MAX_BYTES = Math.floor(SURFACES["subagents.schemaErrors"].maxBytes / SCHEMA_ERRORS_SHOWN);
/** Tail of an answer searched for a trailing JSON value, in UTF-16 code units. */
export const JSON_SEARCH_MAX_CHARS = 1024 * 1024;
/** Most start positions tried when looking for the trailing JSON value. */
export const JSON_CANDIDATES_MAX = 200;

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];
const SCHEMA = { $ref: "#/$defs/schema" };
const SCHEMA_MAP = { type: "object", additionalProperties: SCHEMA };
const SCHEMA_LIST = { type: "array", minItems: 1, items: SCHEMA };
const COUNT = { type: "integer", minimum: 0 };
const BOOL_OR_SCHEMA = { anyOf: [{ type: "boolean" }, SCHEMA] };

/** The keywords an output_schema may use (what TypeBox's compiler evaluates), each with its own shape. */
const KEYWORDS: Record<string, unknown> = {
	$schema: { type: "string" },
	$id: { type: "string" },
	$comment: { type: "string" },
	title: { type: "string" },
	description: { type: "string" },
	default: {},
	examples: { type: "array" },
	$defs: SCHEMA_MAP,
	definitions: SCHEMA_MAP,
	$ref: { type: "string", pattern: "^#/(\\$defs|definitions)/[^/]+$" },
	type: { anyOf: [{ enum: TYPES }, { type: "array", minItems: 1, uniqueItems: true, items: { enum: TYPES } }] },
	enum: { type: "array", minItems: 1 },
	const: {},
	properties: SCHEMA_MAP,
	patternProperties: SCHEMA_MAP,
	additionalProperties: BOOL_OR_SCHEMA,
	required: { type: "array", uniqueItems: true, items: { type: "string" } },
	propertyNames: SCHEMA,
	minProperties: COUNT,
	maxProperties: COUNT,
	items: BOOL_OR_SCHEMA,
	prefixItems: SCHEMA_LIST,
	contains: SCHEMA,
	minContains: COUNT,
	maxContains: COUNT,
	minItems: COUNT,
	maxItems: COUNT,
	uniqueItems: { type: "boolean" },
	allOf: SCHEMA_LIST,
	anyOf: SCHEMA_LIST,
	oneOf: SCHEMA_LIST,
	not: SCHEMA,
	if: SCHEMA,
	// biome-ignore lint/suspicious/noThenProperty: "then" is a JSON Schema keyword in a plain data object, never awaited
	then: SCHEMA,
	else: SCHEMA,
	minLength: COUNT,
	maxLength: COUNT,
	pattern: { type: "string" },
	format: { type: "string" },
	minimum: { type: "number" },
	maximum: { type: "number" },
	exclusiveMinimum: { type: "number" },
	exclusiveMaximum: { type: "number" },
	multipleOf: { type: "number", exclusiveMinimum: 0 },
};

/** Keywords an output_schema may use, for the error that names them. */
export const SUPPORTED_KEYWORDS: readonly string[] = Object.keys(KEYWORDS);

/** A JSON Schema describing the output schemas accepted: objects of the supported keywords, recursively. */
const META_SCHEMA = {
	$defs: {
		schema: {
			anyOf: [{ type: "boolean" }, { type: "object", properties: KEYWORDS, additionalProperties: false }],
		},
	},
	type: "object",
	properties: KEYWORDS,
	additionalProperties: false,
};

type Validator = ReturnType<typeof Compile>;
let metaValidator: Validator | undefined;

/** One validator error as TypeBox reports it. */
interface ValidatorError {
	keyword?: string;
	instancePath?: string;
	message?: string;
	params?: Record<string, unknown>;
}

/** A compiled, accepted output schema. */
export interface OutputSchema {
	/** The schema as given (plain JSON). */
	schema: Record<string, unknown>;
	/** Its JSON text, pretty-printed, as the child is shown it. */
	text: string;
	/** TypeBox's compiled validator. */
	validator: Validator;
}

export type Compiled = { ok: true; schema: OutputSchema } | { ok: false; error: string };

function errorsOf(validator: Validator, value: unknown): ValidatorError[] {
	try {
		return [...(validator.Errors(value) as Iterable<ValidatorError>)];
	} catch {
		return [];
	}
}

/** "/a/0: must be string", clipped; the root is named "(root)". */
export function formatError(e: ValidatorError): string {
	const where = e.instancePath ? e.instancePath : "(root)";
	const extra = e.params && Array.isArray(e.params.allowedValues) ? ` ${JSON.stringify(e.params.allowedValues)}` : "";
	const line = `${where}: ${e.message ?? e.keyword ?? "invalid"}${extra}`;
	return project(line, "subagents.schemaErrors", { maxBytes: SCHEMA_ERROR_MAX_BYTES, maxLines: 1 }).text;
}

/** The errors worth quoting, formatted and deduplicated, most specific first (TypeBox lists a parent's summary errors before its children's). */
function quotedErrors(errors: ValidatorError[]): string[] {
	const meaningful = errors.filter((e) => e.keyword !== "boolean");
	return [...new Set((meaningful.length > 0 ? meaningful : errors).map(formatError))];
}

/** The first errors within their list surface (subagents.schemaErrors), then "… and N more" for the rest. */
export function firstErrors(errors: ValidatorError[]): string[] {
	return [...project(quotedErrors(errors), "subagents.schemaErrors").entries];
}

/** Why a schema was refused, from the meta-schema's errors: unknown keywords named, else the first error. */
function metaComplaint(errors: ValidatorError[]): string {
	const unknown = errors.find((e) => e.keyword === "additionalProperties");
	if (unknown) {
		const names = (unknown.params?.additionalProperties as string[] | undefined) ?? [];
		const where = unknown.instancePath ? ` at ${unknown.instancePath}` : "";
		return (
			`unsupported keyword${names.length === 1 ? "" : "s"} ${names.map((n) => JSON.stringify(n)).join(", ")}${where}; ` +
			`supported: ${SUPPORTED_KEYWORDS.join(", ")}`
		);
	}
	return quotedErrors(errors)[0] ?? "not a JSON Schema";
}

/** Every local $ref must name a definition the schema has (TypeBox would otherwise fail every value). */
function danglingRef(schema: Record<string, unknown>): string | undefined {
	const defs = {
		$defs: (schema.$defs ?? {}) as Record<string, unknown>,
		definitions: (schema.definitions ?? {}) as Record<string, unknown>,
	};
	for (const [key, value] of schemaEntries(schema)) {
		if (key !== "$ref" || typeof value !== "string") continue;
		const [, folder, name] = /^#\/(\$defs|definitions)\/(.+)$/.exec(value) ?? [];
		if (!folder || !Object.hasOwn(defs[folder as keyof typeof defs], name)) return value;
	}
	return undefined;
}

/**
 * Accept an output_schema (an object, or its JSON text) or say exactly why not: not JSON, not an object,
 * too large, an unsupported keyword, a malformed keyword, a dangling $ref, an invalid regular expression.
 */
export function compileOutputSchema(raw: unknown): Compiled {
	let schema = raw;
	if (typeof raw === "string") {
		try {
			schema = JSON.parse(raw);
		} catch (error) {
			return { ok: false, error: `it is a string that is not valid JSON (${(error as Error).message})` };
		}
	}
	if (!schema || typeof schema !== "object" || Array.isArray(schema)) {
		return { ok: false, error: 'it must be a JSON Schema object, e.g. {"type":"object","properties":{…}}' };
	}
	const text = JSON.stringify(schema, null, 2);
	const bytes = utf8Length(text);
	if (bytes > OUTPUT_SCHEMA_MAX_BYTES) {
		return { ok: false, error: `it is ${bytes} bytes as JSON; the limit is ${OUTPUT_SCHEMA_MAX_BYTES}` };
	}
	metaValidator ??= Compile(META_SCHEMA);
	if (!metaValidator.Check(schema)) return { ok: false, error: metaComplaint(errorsOf(metaValidator, schema)) };
	const dangling = danglingRef(schema as Record<string, unknown>);
	if (dangling) return { ok: false, error: `$ref ${JSON.stringify(dangling)} names no definition in $defs` };
	let validator: Validator;
	try {
		validator = Compile(schema as Record<string, unknown>);
		validator.Check(null); // patterns compile lazily in some paths: exercise once
	} catch (error) {
		return { ok: false, error: `TypeBox cannot compile it: ${(error as Error).message}` };
	}
	return { ok: true, schema: { schema: schema as Record<string, unknown>, text, validator } };
}

/** Where the JSON value at the end of an answer is, if there is one. */
export type Extracted = { ok: true; value: unknown; raw: string } | { ok: false };

function tryParse(text: string): Extracted {
	const raw = text.trim();
	if (raw.length === 0) return { ok: false };
	try {
		return { ok: true, value: JSON.parse(raw), raw };
	} catch {
		return { ok: false };
	}
}

const TRAILING_FENCE = /```[A-Za-z]*[ \t]*\r?\n([\s\S]*?)\r?\n[ \t]*```\s*$/;

/**
 * The JSON value an answer ends with: the whole answer, a closing ```json fence, or the longest tail that
 * starts a line with "{" or "[" and parses. Only whitespace may follow it.
 */
export function extractTrailingJson(answer: string): Extracted {
	const whole = tryParse(answer);
	if (whole.ok) return whole;
	const text = answer.length > JSON_SEARCH_MAX_CHARS ? answer.slice(-JSON_SEARCH_MAX_CHARS) : answer;
	const fence = TRAILING_FENCE.exec(text);
	if (fence) {
		// The last fence opens at the last ``` before the closing one.
		const body = fence[1];
		const inner = body.lastIndexOf("```");
		const parsed = tryParse(inner >= 0 ? body.slice(body.indexOf("\n", inner) + 1) : body);
		if (parsed.ok) return parsed;
	}
	const starts: number[] = [];
	const lineStart = /(^|\n)[ \t]*([[{])/g;
	for (let m = lineStart.exec(text); m; m = lineStart.exec(text)) starts.push(m.index + m[0].length - 1);
	for (const start of starts.slice(-JSON_CANDIDATES_MAX)) {
		const parsed = tryParse(text.slice(start));
		if (parsed.ok) return parsed;
	}
	return { ok: false };
}

/** A checked answer: the JSON it ends with and whether it validates. */
export type Checked =
	| { ok: true; value: unknown; raw: string }
	| { ok: false; found: boolean; value?: unknown; raw?: string; errors: string[] };

/**
 * checkAnswer with a time bound: when the schema has patterns, they are first tried on the answer's strings in
 * a worker with a deadline (pattern-probe.ts); a pattern that does not finish in time makes the answer
 * invalid, naming it, and the validator never runs it on the main thread.
 */
export async function checkAnswerBounded(schema: OutputSchema, answer: string, timeoutMs?: number): Promise<Checked> {
	const patterns = schemaPatterns(schema.schema);
	if (patterns.length > 0) {
		const extracted = extractTrailingJson(answer);
		if (!extracted.ok) return { ok: false, found: false, errors: [] };
		const probe = await probePatterns(patterns, valueStrings(extracted.value), timeoutMs);
		if (!probe.ok) {
			const message = "pattern" in probe ? patternTimedOut(probe.pattern, probe.timeoutMs) : patternProbeFailed();
			const errors = [formatError({ message })]; // clipped as every validator error is
			return { ok: false, found: true, value: extracted.value, raw: extracted.raw, errors };
		}
	}
	return checkAnswer(schema, answer);
}

export function checkAnswer(schema: OutputSchema, answer: string): Checked {
	const extracted = extractTrailingJson(answer);
	if (!extracted.ok) return { ok: false, found: false, errors: [] };
	if (schema.validator.Check(extracted.value)) return { ok: true, value: extracted.value, raw: extracted.raw };
	const errors = firstErrors(errorsOf(schema.validator, extracted.value));
	return { ok: false, found: true, value: extracted.value, raw: extracted.raw, errors };
}
