/**
 * Model-facing wording of context-trim: the one marker message that replaces the left-out middle
 * of a trimmed history. The index lines come from the shared transcript wording, so a forked
 * child's narration names the same things. Pinned by test/unit/transcript-trim.test.ts.
 */

import { estimateTokens } from "../shared/text/tokens.ts";
import type { OmissionIndex } from "../shared/transcript/omission.ts";
import { DETAIL_STEPS, formatOmissionIndex, transcriptWhere } from "../shared/transcript/prompt.ts";

/** customType of the marker message (Pi sends custom messages to the model as user messages). */
export const MARKER_CUSTOM_TYPE = "context-trim";

function opening(index: OmissionIndex): string {
	if (index.messages === 0) {
		return "[context-trim] Some long texts in this conversation are shown only as head and tail (a log with its notable lines first) in this request, so that it fits the model's context window. Nothing was summarized.";
	}
	return "[context-trim] Part of this conversation is not shown in this request, so that it fits the model's context window: it was left out between the first reply above and the messages below. Nothing was summarized; the task and the first plan above and the recent work below are verbatim.";
}

/**
 * The marker text: what was left out, which tools with brief arguments, files touched, what was
 * shortened, and where the full transcript is. Detail is stepped down until the text fits
 * `maxTokens` (the plan's marker reserve); the opening and the transcript location always stay.
 */
export function renderTrimMarker(index: OmissionIndex, sessionFile: string | undefined, maxTokens: number): string {
	let text = "";
	for (const detail of DETAIL_STEPS) {
		text = [opening(index), ...formatOmissionIndex(index, detail), transcriptWhere(sessionFile)].join("\n");
		if (estimateTokens(text) <= maxTokens) return text;
	}
	return text;
}
