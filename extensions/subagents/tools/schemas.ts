/**
 * The parameters of the seven tools as TypeBox schemas, made once at module level. Their bytes go into
 * every request the parent makes (the tool declarations), so they change only with intent; the words in
 * them come from prompt/. A recorded spawn is checked against SPAWN_PARAMETERS again when `pi -c` restores
 * it (delivery/record-checks.ts).
 */
import { Type } from "typebox";
import { SPAWN_BUDGET_PARAM } from "../prompt/budget.ts";
import { TOOL_TEXT } from "../prompt/common.ts";
import { SPAWN_AFTER_FAILED_PARAM, SPAWN_AFTER_PARAM } from "../prompt/pipeline.ts";
import { SPAWN_AGENT_PARAM, SPAWN_EXTENSIONS_PARAM } from "../prompt/spawn.ts";

export const SPAWN_PARAMETERS = Type.Object({
	prompt: Type.String({ description: TOOL_TEXT.spawn.prompt }),
	agent: Type.Optional(Type.String({ description: SPAWN_AGENT_PARAM })),
	name: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.name })),
	model: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.model })),
	tools: Type.Optional(Type.Array(Type.String(), { description: TOOL_TEXT.spawn.tools })),
	cwd: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.cwd })),
	thinking: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.thinking })),
	context: Type.Optional(
		Type.Union([Type.Literal("fresh"), Type.Literal("fork")], { description: TOOL_TEXT.spawn.context }),
	),
	extensions: Type.Optional(
		Type.Union([Type.Boolean(), Type.Array(Type.String())], { description: SPAWN_EXTENSIONS_PARAM }),
	),
	isolation: Type.Optional(
		Type.Union([Type.Literal("none"), Type.Literal("worktree")], { description: TOOL_TEXT.spawn.isolation }),
	),
	output_schema: Type.Optional(
		Type.Object({}, { additionalProperties: true, description: TOOL_TEXT.spawn.outputSchema }),
	),
	after: Type.Optional(Type.Array(Type.String(), { description: SPAWN_AFTER_PARAM })),
	after_failed: Type.Optional(
		Type.Union([Type.Literal("skip"), Type.Literal("run")], { description: SPAWN_AFTER_FAILED_PARAM }),
	),
	budget: Type.Optional(
		Type.Object(
			{
				tokens: Type.Optional(Type.Number()),
				cost: Type.Optional(Type.Number()),
				shared: Type.Optional(Type.Boolean()),
			},
			{ description: SPAWN_BUDGET_PARAM },
		),
	),
});

export const WAIT_PARAMETERS = Type.Object({
	ids: Type.Optional(Type.Array(Type.String(), { description: TOOL_TEXT.wait.ids })),
	timeout_s: Type.Optional(Type.Number({ description: TOOL_TEXT.wait.timeout, minimum: 0 })),
	mode: Type.Optional(Type.Union([Type.Literal("all"), Type.Literal("any")], { description: TOOL_TEXT.wait.mode })),
});

export const CHECK_PARAMETERS = Type.Object({ id: Type.String({ description: TOOL_TEXT.check.id }) });

export const SEND_PARAMETERS = Type.Object({
	id: Type.String({ description: TOOL_TEXT.send.id }),
	text: Type.String({ description: TOOL_TEXT.send.text }),
});

export const CANCEL_PARAMETERS = Type.Object({
	ids: Type.Array(Type.String(), { description: TOOL_TEXT.cancel.ids }),
});

export const LIST_PARAMETERS = Type.Object({});

export const CLEANUP_PARAMETERS = Type.Object({
	ids: Type.Array(Type.String(), { description: TOOL_TEXT.cleanup.ids }),
	discard: Type.Optional(Type.Boolean({ description: TOOL_TEXT.cleanup.discard })),
});
