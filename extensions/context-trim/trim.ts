/**
 * The pure core of context-trim: the message list Pi is about to send → the list to send instead.
 * Within budget the input comes back as is; over budget it is the shared retention plan (head +
 * marker + tail at segment boundaries, oversized texts as head+tail) rendered as messages.
 * The message budget formula (messageBudget) lives in the shared transcript module so a forked
 * child's budget can be computed the same way.
 */
import {
	DEFAULT_MARKER_RESERVE_TOKENS,
	MESSAGE_OVERHEAD_TOKENS,
	planRetention,
	type RetentionOptions,
	type RetentionPlan,
	type Sizer,
	type TranscriptMessage,
} from "../shared/transcript/plan.ts";
import { buildView, defaultProject, type OmissionMemo, type ProjectFn } from "../shared/transcript/view.ts";
import { MARKER_CUSTOM_TYPE, renderTrimMarker } from "./prompt.ts";

export interface TrimOptions extends RetentionOptions {
	/** The session file, named in the marker as the place of the full transcript. */
	sessionFile?: string;
	/** Sizes messages (a TokenSizer keeps estimates across calls). */
	sizer?: Sizer;
	/** Shortens oversized texts (default: the projection primitive without a stored copy). */
	project?: ProjectFn;
	/** Reuses the omission index while the cut is stable (built on the same TokenSizer as `sizer`). */
	memo?: OmissionMemo;
}

export interface TrimResult {
	/** The list to send: the input array itself when nothing was trimmed. */
	messages: TranscriptMessage[];
	/** True when something was left out or shortened (then exactly one marker message is in `messages`). */
	trimmed: boolean;
	/** The retention plan followed. */
	plan: RetentionPlan;
	/** The marker text, when trimmed. */
	marker?: string;
}

/** Trim `messages` to the budget; never mutates the input. */
export function trimMessages(messages: TranscriptMessage[], options: TrimOptions): TrimResult {
	const plan = planRetention(messages, options, options.sizer);
	if (!plan.trimmed) return { messages, trimmed: false, plan };
	const view = buildView(messages, plan, options.project ?? defaultProject, options.memo);
	const reserve = options.markerReserveTokens ?? DEFAULT_MARKER_RESERVE_TOKENS;
	let marker = "";
	const out: TranscriptMessage[] = [];
	for (const item of view.items) {
		if (item.kind === "message") {
			out.push(item.message);
			continue;
		}
		marker = renderTrimMarker(item.omission, options.sessionFile, reserve - MESSAGE_OVERHEAD_TOKENS);
		out.push({
			role: "custom",
			customType: MARKER_CUSTOM_TYPE,
			content: marker,
			display: false,
			timestamp: item.timestamp,
		});
	}
	return { messages: out, trimmed: true, plan, marker };
}
