/**
 * ask_parent, the one tool only children have: an inline extension the backend gives each child it starts,
 * bound to that child's channel into its parent's question desk. The parent never registers it, so its
 * schema is not in the parent's requests.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { ASK_TOOL_TEXT, MAX_QUESTION_OPTIONS } from "../prompt/ask.ts";
import type { AskInput } from "./question.ts";

/** Name of the child's tool. */
export const ASK_TOOL_NAME = ASK_TOOL_TEXT.name;

/** One child's way to its parent: resolves with what the child reads, rejects with a refusal. */
export type AskChannel = (input: AskInput, signal?: AbortSignal) => Promise<string>;

export const ASK_PARAMETERS = Type.Object({
	question: Type.String({ description: ASK_TOOL_TEXT.question }),
	options: Type.Optional(
		Type.Array(Type.String(), { description: ASK_TOOL_TEXT.options, maxItems: MAX_QUESTION_OPTIONS }),
	),
});

/** The extension that registers ask_parent in a child, bound to `channel`. */
export function askParentExtension(channel: AskChannel): (pi: ExtensionAPI) => void {
	return (pi) => {
		pi.registerTool({
			name: ASK_TOOL_NAME,
			label: ASK_TOOL_TEXT.label,
			description: ASK_TOOL_TEXT.description,
			parameters: ASK_PARAMETERS,
			execute: async (_id, params, signal) => {
				const text = await channel(params as AskInput, signal);
				return { content: [{ type: "text", text }], details: {} };
			},
		});
	};
}
