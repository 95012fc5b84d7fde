/**
 * Pi-shaped message builders and fast-check arbitraries for the transcript tests (not a test file).
 * Shapes follow Pi's AgentMessage (user, assistant with toolCall parts, toolResult, custom,
 * compactionSummary) on both Pi lines.
 */
import fc from "fast-check";
import type { TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";

export interface CallSpec {
	name: string;
	arguments: Record<string, unknown>;
	result: string;
	isError?: boolean;
}

export class HistoryBuilder {
	readonly messages: TranscriptMessage[] = [];
	private clock: number;
	private callId = 0;

	/** @param startAt the clock of the first message (ms): histories of different sessions never share timestamps. */
	constructor(startAt = 1_700_000_000_000) {
		this.clock = startAt;
	}

	private tick(): number {
		this.clock += 1000;
		return this.clock;
	}

	user(text: string): this {
		this.messages.push({ role: "user", content: [{ type: "text", text }], timestamp: this.tick() });
		return this;
	}

	assistant(text: string, calls: CallSpec[] = [], usage?: { input: number; output: number }): this {
		const ids = calls.map(() => `call_${++this.callId}`);
		const content: unknown[] = [];
		if (text) content.push({ type: "text", text });
		calls.forEach((c, i) => {
			content.push({ type: "toolCall", id: ids[i], name: c.name, arguments: c.arguments });
		});
		const u = usage ?? { input: 0, output: 0 };
		this.messages.push({
			role: "assistant",
			content,
			api: "openai-completions",
			provider: "mock",
			model: "mock-model",
			usage: {
				input: u.input,
				output: u.output,
				cacheRead: 0,
				cacheWrite: 0,
				totalTokens: u.input + u.output,
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
			},
			stopReason: calls.length > 0 ? "toolUse" : "stop",
			timestamp: this.tick(),
		});
		calls.forEach((c, i) => {
			this.messages.push({
				role: "toolResult",
				toolCallId: ids[i],
				toolName: c.name,
				content: [{ type: "text", text: c.result }],
				isError: c.isError === true,
				timestamp: this.tick(),
			});
		});
		return this;
	}

	custom(customType: string, text: string): this {
		this.messages.push({ role: "custom", customType, content: text, display: true, timestamp: this.tick() });
		return this;
	}

	compactionSummary(summary: string): this {
		this.messages.push({ role: "compactionSummary", summary, tokensBefore: 50_000, timestamp: this.tick() });
		return this;
	}
}

/** Deterministic filler of about `chars` characters, distinct per seed. */
export function filler(seed: string, chars: number): string {
	const line = `${seed}: lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789\n`;
	return line.repeat(Math.max(1, Math.ceil(chars / line.length))).slice(0, Math.max(1, chars));
}

const TOOL_NAMES = ["bash", "read", "edit", "grep", "write"];

function argsFor(name: string, i: number): Record<string, unknown> {
	if (name === "bash") return { command: `npm test -- case-${i}` };
	if (name === "grep") return { pattern: `needle${i}`, path: "src" };
	return { path: `src/file-${i}.ts` };
}

export type Step =
	| { kind: "user"; chars: number }
	| { kind: "assistant"; chars: number; calls: Array<{ tool: number; resultChars: number }> }
	| { kind: "custom"; chars: number };

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("user" as const), chars: fc.integer({ min: 1, max: 2000 }) }) },
	{
		weight: 5,
		arbitrary: fc.record({
			kind: fc.constant("assistant" as const),
			chars: fc.integer({ min: 0, max: 1500 }),
			calls: fc.array(
				fc.record({
					tool: fc.integer({ min: 0, max: TOOL_NAMES.length - 1 }),
					resultChars: fc.integer({ min: 1, max: 6000 }),
				}),
				{ maxLength: 3 },
			),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({ kind: fc.constant("custom" as const), chars: fc.integer({ min: 1, max: 800 }) }),
	},
);

/** Build a history from steps; the first step is always a user message (a task). */
export function buildHistory(
	steps: Step[],
	options: { summary?: boolean; startAt?: number } = {},
): TranscriptMessage[] {
	const b = new HistoryBuilder(options.startAt);
	if (options.summary) b.compactionSummary(filler("summary", 600));
	b.user(filler("TASK the original task statement", 300));
	steps.forEach((step, i) => {
		if (step.kind === "user") b.user(filler(`user ${i}`, step.chars));
		else if (step.kind === "custom") b.custom("note", filler(`note ${i}`, step.chars));
		else {
			const calls = step.calls.map((c, k) => {
				const name = TOOL_NAMES[c.tool];
				return { name, arguments: argsFor(name, i * 10 + k), result: filler(`result ${i}.${k}`, c.resultChars) };
			});
			b.assistant(step.chars > 0 ? filler(`reply ${i}`, step.chars) : "", calls);
		}
	});
	return b.messages;
}

export const historyArb = fc.record({
	steps: fc.array(stepArb, { minLength: 1, maxLength: 60 }),
	summary: fc.boolean(),
});
