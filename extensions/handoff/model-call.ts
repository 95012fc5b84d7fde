/**
 * The handoff's model calls through Pi's provider layer (adapter): turns a ModelCall into pi-ai's
 * complete() and its reply back into a ModelReply, and resolves the model's API key and headers the
 * way each Pi line offers them.
 */
import { complete } from "@mariozechner/pi-ai";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { CallModel } from "./handoff.ts";

/** Retries of a failed handoff call (transient provider errors); the SDK default would be two. */
const HANDOFF_MAX_RETRIES = 1;

export type AnyModel = NonNullable<ExtensionContext["model"]>;

/** A model ready to call: where to send it and with which credentials. */
export interface ResolvedModel {
	model: AnyModel;
	apiKey: string | undefined;
	headers: unknown;
}

function textOf(content: unknown, type: "text" | "thinking"): string {
	if (!Array.isArray(content)) return "";
	return content
		.filter((p) => p?.type === type)
		.map((p) => String(type === "text" ? p.text : p.thinking))
		.join("\n");
}

/** Credentials of `model` (Pi 1.x: getApiKeyAndHeaders, which may also re-route; 0.73: getApiKey). */
export async function withAuth(ctx: ExtensionContext, model: AnyModel): Promise<ResolvedModel | undefined> {
	const registry = ctx.modelRegistry as unknown as {
		getApiKeyAndHeaders?: (
			m: AnyModel,
		) => Promise<{ ok: boolean; apiKey?: string; headers?: unknown; baseUrl?: string }>;
		getApiKey?: (m: AnyModel) => Promise<string | undefined>;
	};
	if (registry.getApiKeyAndHeaders) {
		const auth = await registry.getApiKeyAndHeaders(model);
		if (!auth.ok) return undefined;
		const routed = auth.baseUrl ? { ...model, baseUrl: auth.baseUrl } : model;
		return { model: routed, apiKey: auth.apiKey, headers: auth.headers };
	}
	if (registry.getApiKey) return { model, apiKey: await registry.getApiKey(model), headers: undefined };
	return undefined;
}

export function modelCaller(resolved: ResolvedModel, maxTokens: number): CallModel {
	const { model, apiKey, headers } = resolved;
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
		const response = await complete(
			model,
			{ systemPrompt: call.systemPrompt, messages },
			{
				apiKey,
				headers: headers as Record<string, string> | undefined,
				maxTokens,
				signal,
				maxRetries: HANDOFF_MAX_RETRIES,
			},
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
