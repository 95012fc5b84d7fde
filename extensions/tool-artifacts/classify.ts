/**
 * The head share of each kind of output (the kinds themselves are decided in shared/text/tool-kind.ts,
 * re-exported here). The kind picks the summary prompt and the fallback excerpt's head share. Pure.
 */
import { SURFACES } from "../shared/surfaces.ts";
import type { OutputClass } from "../shared/text/tool-kind.ts";

export {
	classifyTool,
	looksLikeJson,
	nameTokens,
	OUTPUT_CLASSES,
	type OutputClass,
} from "../shared/text/tool-kind.ts";

/**
 * Head share (0..1) of the fallback excerpt's body per kind, as the table has it (the configured share is
 * the stub surface's: `stubSurface` in artifacts.ts). Command logs keep more tail because errors, summaries
 * and exit codes come last; web pages and structured data lead with what matters.
 */
export const CLASS_HEAD_SHARE: Record<OutputClass, number> = {
	command: SURFACES["toolArtifacts.stub.command"].headShare,
	search: SURFACES["toolArtifacts.stub.search"].headShare,
	listing: SURFACES["toolArtifacts.stub.listing"].headShare,
	structured: SURFACES["toolArtifacts.stub.structured"].headShare,
	web: SURFACES["toolArtifacts.stub.web"].headShare,
	file: SURFACES["toolArtifacts.stub.file"].headShare,
	unknown: SURFACES["toolArtifacts.stub.unknown"].headShare,
};
