/** subagent_list's handler: one line per child of this session, with its state. */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { questionBrief } from "../ask/question.ts";
import { statusGlyph } from "../domain/format.ts";
import type { SubagentServices } from "../domain/services.ts";
import { askingNote } from "../prompt/ask.ts";
import * as P from "../prompt/common.ts";
import { reply, row, type ToolReturn } from "./reply.ts";

export function listTool(deps: Pick<SubagentServices, "children">, ctx: ExtensionContext): ToolReturn {
	const manager = deps.children(ctx);
	const children = manager.list();
	if (children.length === 0) return reply(P.NO_CHILDREN, { rows: [] });
	const now = Date.now();
	const line = (c: (typeof children)[number]) => {
		const base = P.listLine(c, now, statusGlyph(c.state));
		return c.question ? `${base} · ${askingNote(questionBrief(c.question.text))}` : base;
	};
	return reply(children.map(line).join("\n"), {
		rows: children.map((c) => row(c)),
	});
}
