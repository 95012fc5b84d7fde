/**
 * Handoff compaction (thin Pi adapter). Compaction becomes summary → questions → answers
 * (session_before_compact); a probe at each turn end stages the handoff when free context falls
 * toward Pi's own compaction threshold (Pi's reserve, read from its settings, plus a margin), so that
 * Pi's compaction — mid-run on 1.x, at the run's end or on overflow on 0.73 — finds it ready. A staged
 * handoff Pi did not use is applied once the run is over (ctx.compact() aborts a running agent, so
 * only when idle). The lifecycle state and its timing live in HandoffSession (session.ts); this file
 * only subscribes Pi's events to it and reads each event's context for it. The pipeline, the
 * serializer, the trajectories and the probe are plain modules.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension, tellPerson } from "../shared/host/bootstrap.ts";
import {
	compactionReasonOf,
	compactionSettingsOf,
	onPi1Event,
	projectTrusted,
	readCompactionSettings,
} from "../shared/host/pi-host.ts";
import type { ResolvedModel } from "./model-call.ts";
import { chooseModel } from "./model-ref.ts";
import { applyHandoff, computeHandoff, type HandoffSettings, handoffSurfaces, transcriptLocation } from "./prepare.ts";
import { RESUME_MESSAGE } from "./prompt.ts";
import type { BranchEntry, HistoryMessage } from "./serialize.ts";
import { type HandoffContext, HandoffSession, lastStopReason } from "./session.ts";

/** customType of the follow-up that resumes the task after a staged handoff. */
export const RESUME_CUSTOM_TYPE = "headroom-handoff-resume";

export default function handoffExtension(pi: ExtensionAPI) {
	const host = bootExtension(pi, "handoff");
	const session = new HandoffSession<ResolvedModel>({
		resume: () =>
			pi.sendMessage(
				{ customType: RESUME_CUSTOM_TYPE, content: RESUME_MESSAGE, display: true },
				{ deliverAs: "followUp", triggerTurn: true },
			),
	});

	const settings = (ctx: ExtensionContext): HandoffSettings => {
		const config = host.config(ctx);
		return {
			handoff: config.handoff,
			headShare: config.projection.headShare,
			surfaces: handoffSurfaces(config),
			toolClasses: config.toolArtifacts.toolClasses,
		};
	};

	/** One event's context as the session reads it. Handoff's messages carry their own prefix (prompt.ts). */
	const contextOf = (ctx: ExtensionContext): HandoffContext<ResolvedModel> => {
		const log = (message: string) => tellPerson(ctx, message);
		return {
			settings: () => settings(ctx),
			modelKey: () => (ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : ""),
			modelWindow: () => ctx.model?.contextWindow,
			readPiCompaction: () => readCompactionSettings(ctx.cwd, host.agentDir(), ctx.model, projectTrusted(ctx)),
			usage: () => ctx.getContextUsage(),
			leafId: () => ctx.sessionManager.getLeafId(),
			branch: () => ctx.sessionManager.getBranch() as unknown as BranchEntry[],
			location: () => transcriptLocation(ctx),
			chooseModel: (configured) => {
				const registry = ctx.modelRegistry;
				const choice = chooseModel(
					configured,
					ctx.model,
					(provider, id) => registry.find(provider, id),
					() => (typeof registry.getAvailable === "function" ? registry.getAvailable() : registry.getAll()),
				);
				return { ...choice, model: choice.model ? { model: choice.model, registry } : undefined };
			},
			computeHandoff: (model, input, signal) => computeHandoff(model, settings(ctx), input, signal, log),
			applyHandoff: (computed, lastIndex) => applyHandoff(ctx, computed, lastIndex, log),
			isIdle: () => ctx.isIdle(),
			compact: (done) =>
				ctx.compact({
					onComplete: (result) => done.onComplete(result.details),
					onError: (error) => done.onError(error.message),
				}),
			log,
		};
	};

	pi.on("session_before_compact", (event, ctx) => {
		const { preparation } = event;
		return session.beforeCompact(
			{
				effectiveSettings: compactionSettingsOf(preparation),
				reason: compactionReasonOf(event),
				customInstructions: event.customInstructions,
				messagesToSummarize: preparation.messagesToSummarize as HistoryMessage[],
				turnPrefixMessages: preparation.turnPrefixMessages as HistoryMessage[],
				previousSummary: preparation.previousSummary,
				firstKeptEntryId: preparation.firstKeptEntryId,
				tokensBefore: preparation.tokensBefore,
				branch: event.branchEntries as unknown as BranchEntry[],
				signal: event.signal,
			},
			contextOf(ctx),
		);
	});
	// Pi 1.x: a compaction failed or was aborted.
	onPi1Event<"session_compact_failed", ExtensionContext>(pi, "session_compact_failed", (event, ctx) =>
		session.compactFailed(event, contextOf(ctx)),
	);
	pi.on("turn_start", () => session.turnStarted());
	pi.on("turn_end", (_event, ctx) => session.turnEnded(contextOf(ctx)));
	pi.on("agent_start", () => session.agentStarted());
	pi.on("agent_end", (event, ctx) =>
		session.agentEnded(lastStopReason(event.messages as HistoryMessage[]), contextOf(ctx)),
	);
	// Pi 1.x: the run, its retries and Pi's own compaction are all over.
	onPi1Event<"agent_settled", ExtensionContext>(pi, "agent_settled", (_event, ctx) =>
		session.agentSettled(contextOf(ctx)),
	);
	pi.on("session_shutdown", () => session.shutdown());
}
