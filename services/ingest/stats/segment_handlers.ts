/**
 * The segments' calls of crm.stats.v1.StatsService: list (on the reports'
 * connections, as every read of the reports), and create, replace and
 * delete (on the write path). A body is judged by the query's own rules
 * (segments.ts); the refusals are the public ones the gateway maps.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { StatsService } from "../../lib/gen/crm/stats/v1/stats_pb.ts";
import { Code, fieldProblem, publicError, siteNotFound } from "../../lib/errors.ts";
import type { Database } from "../../lib/db/mod.ts";
import { valueOf } from "../../lib/stats/wire.ts";
import { segmentMembersOf } from "../../lib/stats/segments_wire.ts";
import { MAX_SEGMENTS } from "../../lib/manifest/analytics_members.ts";
import { IngestStore } from "../storage.ts";
import {
  createSegment,
  deleteSegment,
  listSegments,
  replaceSegment,
  type Segment,
  SEGMENT_ID,
  SegmentRefusal,
} from "../segments_store.ts";
import { parseSegmentBody } from "./segments.ts";
import { refused } from "./service.ts";

type SegmentCalls = Pick<
  ServiceImpl<typeof StatsService>,
  "listSegments" | "createSegment" | "replaceSegment" | "deleteSegment"
>;

export interface SegmentDeps {
  /** The write path. */
  db: Database;
  /** Runs a read on the reports' connections. */
  read<T>(fn: (db: Database) => Promise<T>): Promise<T>;
}

const message = (s: Segment) => ({ id: s.id, name: s.name, filters: valueOf(s.filters) });

/** A store refusal as the public one. */
function publicRefusal(error: unknown): never {
  if (!(error instanceof SegmentRefusal)) throw error;
  if (error.reason === "segment_exists") throw publicError(Code.AlreadyExists, "segment_exists");
  if (error.reason === "segment_not_found") throw publicError(Code.NotFound, "segment_not_found");
  throw publicError(
    Code.InvalidArgument,
    "invalid_query",
    fieldProblem("name", `a site has at most ${MAX_SEGMENTS} segments`),
  );
}

export function segmentHandlers(deps: SegmentDeps): SegmentCalls {
  const siteFacts = async (db: Database, siteId: string) => {
    const site = await new IngestStore(db).statsSite(siteId);
    if (!site) throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
    return site;
  };
  const known = (id: string) => {
    if (!SEGMENT_ID.test(id)) throw publicError(Code.NotFound, "segment_not_found");
  };
  return {
    listSegments({ siteId }) {
      return deps.read(async (db) => {
        await siteFacts(db, siteId);
        return { segments: (await listSegments(db, siteId)).map(message) };
      });
    },

    async createSegment({ siteId, body }) {
      const site = await siteFacts(deps.db, siteId);
      const input = refused(() => parseSegmentBody(segmentMembersOf(body), site));
      try {
        const segment = await deps.db.transaction((tx) => createSegment(tx, siteId, input));
        return { segment: message(segment) };
      } catch (error) {
        publicRefusal(error);
      }
    },

    async replaceSegment({ siteId, id, body }) {
      const site = await siteFacts(deps.db, siteId);
      known(id);
      const input = refused(() => parseSegmentBody(segmentMembersOf(body), site));
      try {
        const segment = await deps.db.transaction((tx) =>
          replaceSegment(tx, siteId, { id, ...input })
        );
        return { segment: message(segment) };
      } catch (error) {
        publicRefusal(error);
      }
    },

    async deleteSegment({ siteId, id }) {
      known(id);
      try {
        await deps.db.transaction((tx) => deleteSegment(tx, siteId, id));
      } catch (error) {
        publicRefusal(error);
      }
      return {};
    },
  };
}
