/**
 * The one gate in front of every message to the parent that is not a tool's answer (results, questions): when
 * it may go, and when it must wait for the parent to be idle.
 */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { singleShotMode } from "../../shared/host/pi-host.ts";
import type { SubagentManager } from "../children/manager.ts";
import type { SubagentServices } from "./services.ts";

/**
 * Whether a message to the parent may go now. "trigger": only when the parent is idle (the message starts a
 * turn); "append": now, for the next turn (a resumed session). "done": nothing to send from here (no context or
 * no children yet; a context from a replaced session, whose new instance delivers; a top-level single-shot run on
 * Pi 1.x, where a turn started after it settles would race the exit). "busy": the parent is busy, try later.
 */
export function parentGate(
	deps: Pick<SubagentServices, "depth" | "context" | "existingChildren">,
	how: "trigger" | "append",
): { ctx: ExtensionContext; manager: SubagentManager } | "done" | "busy" {
	const ctx = deps.context();
	const manager = deps.existingChildren();
	if (!ctx || !manager) return "done";
	let idle: boolean;
	try {
		idle = ctx.isIdle();
	} catch {
		return "done";
	}
	if (how === "trigger" && !idle) return "busy";
	if (how === "trigger" && deps.depth === 0 && singleShotMode(ctx)) return "done";
	return { ctx, manager };
}
