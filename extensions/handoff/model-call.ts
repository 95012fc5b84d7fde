/**
 * The handoff's model calls through the host (adapter): turns a ModelCall into one call of the Pi-line
 * shim (`ctx.modelRegistry.complete()` on Pi 1.x, pi-ai's `complete` on 0.73; prompt caching off for
 * these one-off calls) and its reply back into a ModelReply.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { completeOneOff } from "../shared/host/pi-host.ts";
import type { CallModel } from "./handoff.ts";

/** Retries of a failed handoff call (transient provider errors); the SDK default would be two. */
const HANDOFF_MAX_RETRIES = 1;

export type AnyModel = NonNullable<ExtensionContext["model"]>;

/** A model ready to call, and the host registry that reaches it (with its credentials). */
export interface ResolvedModel {
	model: AnyModel;
	registry: unknown;
}

function textOf(content: unknown, type: "text" | "thinking"): string {
	if (!Array.isArray(content)) return "";
	return content
		.filter((p) => p?.type === type)
		.map((p) => String(type === "text" ? p.text : p.thinking))
		.join("\n");
}

export function modelCaller(resolved: ResolvedModel, maxTokens: number): CallModel {
	const { model, registry } = resolved;
	return async (call, signal) => {
		const now = Date.now();
		const usage0 = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
		const cost0 = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
		const messages = call.messages.map((m) =>
			m.role === "user"
				? { role: "user" as const, content: [{ type: "text" as const, text: m.text }], timestamp: now }
				: {
						role: "assistant" as const,
						content: [{ type: "text" as const, text: m.text }],
						api: model.api,
						provider: model.provider,
						model: model.id,
						usage: { ...usage0, cost: cost0 },
						stopReason: "stop" as const,
						timestamp: now,
					},
		);
		const response = await completeOneOff(
			registry,
			model,
			{ systemPrompt: call.systemPrompt, messages },
			{ maxTokens, signal, maxRetries: HANDOFF_MAX_RETRIES },
		);
		if (response.stopReason === "error" || response.stopReason === "aborted") {
			throw new Error(response.errorMessage || response.stopReason);
		}
		const u = response.usage;
		return {
			text: textOf(response.content, "text"),
			reasoning: textOf(response.content, "thinking") || undefined,
			model: `${model.provider}/${response.model || model.id}`,
			usage: {
				input: u.input,
				output: u.output,
				cacheRead: u.cacheRead,
				cacheWrite: u.cacheWrite,
				costUsd: u.cost.total,
			},
		};
	};
}
