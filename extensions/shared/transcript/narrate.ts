/**
 * A parent's history as a forked child's starting context: third-person narration in
 * role-safe text (never tool calls the child did not make), under the same retention policy the
 * parent's own trimmed view follows (planRetention + buildView, with the tightest cut), so the
 * child sees every text, tool name, argument and result the parent's view carries for the same
 * budget — and at least as much for any larger one. Callers should give the child the budget the
 * parent's own view gets (messageBudget in transcript.ts), never a smaller one.
 */

import { contentText } from "../text/content.ts";
import {
	argumentsJson,
	isTranscriptMessage,
	planRetention,
	type RetentionOptions,
	type Sizer,
	type TranscriptMessage,
} from "./plan.ts";
import { FULL_DETAIL, forkIntro, forkTask, formatOmissionIndex, narration, transcriptWhere } from "./prompt.ts";
import { buildView, type ShortenOptions, viewItems } from "./view.ts";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** One message as narration lines. Thinking is private reasoning the parent's own requests also omit for most providers. */
function narrateMessage(message: TranscriptMessage): string[] {
	switch (message.role) {
		case "user":
			return [narration.user(contentText(message.content))];
		case "assistant": {
			const lines: string[] = [];
			if (!Array.isArray(message.content)) return lines;
			for (const part of message.content) {
				if (!isObject(part)) continue;
				if (part.type === "text" && typeof part.text === "string" && part.text.length > 0) {
					lines.push(narration.assistant(part.text));
				} else if (part.type === "toolCall") {
					lines.push(narration.call(String(part.name ?? "?"), argumentsJson(part.arguments)));
				}
			}
			return lines;
		}
		case "toolResult":
			return [narration.result(contentText(message.content), message.isError === true)];
		case "custom":
			return [narration.note(String(message.customType ?? "extension"), contentText(message.content))];
		case "bashExecution":
			if (message.excludeFromContext === true) return [];
			return [narration.userBash(String(message.command ?? ""), String(message.output ?? ""))];
		case "compactionSummary":
		case "branchSummary":
			return [narration.summary(String(message.summary ?? ""))];
		default:
			return [];
	}
}

export interface ForkContextOptions extends Partial<Omit<RetentionOptions, "budgetTokens">> {
	/** Tokens the child may spend on the parent's history (the same budget the parent's own view gets). */
	budgetTokens: number;
	/** The parent's session file, named as the place of the full transcript. */
	sessionFile?: string;
	/** The child's task, stated last. */
	task: string;
	/** How oversized texts are shortened (default: the projection without a stored copy, at `headShare`). */
	shorten?: ShortenOptions;
	/**
	 * Head share when `shorten` is not given: pass the configured one (projectionHeadShare(config) from
	 * host/config.ts) so a child's view cuts like the parent's; default the primitive's.
	 */
	headShare?: number;
	/** Sizes messages (pass a TokenSizer to reuse estimates). */
	sizer?: Sizer;
}

/**
 * Render a parent's message list (AgentMessage[] as Pi's `context` event / sessionManager branch
 * gives them) as a child's starting context: third-person narration, owner framing, same
 * retention policy as the parent's own view. Values that are not messages are skipped.
 */
export function renderForkContext(messages: unknown[], opts: ForkContextOptions): string {
	const list = Array.isArray(messages) ? messages.filter(isTranscriptMessage) : [];
	// No cut step: a child's start is sent once, so it needs no cache-stable cut, and the tightest cut
	// makes the narration a superset of the parent's own view for any budget at least as large.
	const plan = planRetention(list, { cutStepTokens: 1, ...opts, measuredTokens: undefined }, opts.sizer);
	const view = buildView(list, plan, opts.shorten ?? { headShare: opts.headShare });
	const blocks: string[] = [forkIntro(opts.sessionFile)];
	for (const item of viewItems(view)) {
		if (item.kind === "omission") {
			blocks.push(
				narration.omission(formatOmissionIndex(item.omission, FULL_DETAIL), transcriptWhere(opts.sessionFile)),
			);
		} else blocks.push(...narrateMessage(item.message));
	}
	blocks.push(forkTask(String(opts.task ?? "")));
	return blocks.join("\n\n");
}
