/** subagent_list's handler: one line per child of this session, with its state. */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { statusGlyph } from "../domain/format.ts";
import type { SubagentServices } from "../domain/services.ts";
import * as P from "../prompt/common.ts";
import { reply, row, type ToolReturn } from "./reply.ts";

export function listTool(deps: Pick<SubagentServices, "children">, ctx: ExtensionContext): ToolReturn {
	const manager = deps.children(ctx);
	const children = manager.list();
	if (children.length === 0) return reply(P.NO_CHILDREN, { rows: [] });
	const now = Date.now();
	return reply(children.map((c) => P.listLine(c, now, statusGlyph(c.state))).join("\n"), {
		rows: children.map((c) => row(c)),
	});
}
