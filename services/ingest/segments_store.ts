/**
 * A site's segments (named filter sets) in ingest.segments: the manifest's
 * upsert by name, and the reports API's list, create, replace and delete.
 * Filters are stored as the query takes them, already judged by the
 * query's rules (stats/segments.ts).
 */
import type { Queryable } from "../lib/db/mod.ts";
import type { SegmentDef } from "../lib/manifest/types.ts";
import { MAX_SEGMENTS } from "../lib/manifest/analytics_members.ts";

export type SegmentFilters = SegmentDef["filters"];

export interface Segment {
  id: string;
  name: string;
  filters: SegmentFilters;
}

/** Why a write was refused: a name taken, the site full, or an unknown id. */
export class SegmentRefusal extends Error {
  override name = "SegmentRefusal";
  constructor(readonly reason: "segment_exists" | "too_many_segments" | "segment_not_found") {
    super(reason);
  }
}

/** A new segment id: `seg_` and 24 lowercase hex. */
export function newSegmentId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return "seg_" + [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export const SEGMENT_ID = /^seg_[0-9a-f]{24}$/;

const UNIQUE_VIOLATION = "23505";

export async function listSegments(db: Queryable, siteId: string): Promise<Segment[]> {
  return await db.query<Segment & Record<string, unknown>>(
    `select id, name, filters from ingest.segments where site_id = $1 order by name, id`,
    [siteId],
  );
}

/** The segments of `ids` (those that exist). */
export async function segmentsById(
  db: Queryable,
  siteId: string,
  ids: readonly string[],
): Promise<Map<string, Segment>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<Segment & Record<string, unknown>>(
    `select id, name, filters from ingest.segments where site_id = $1 and id = any($2::text[])`,
    [siteId, `{${ids.filter((id) => SEGMENT_ID.test(id)).join(",")}}`],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

async function countOf(db: Queryable, siteId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    "select count(*)::int as n from ingest.segments where site_id = $1",
    [siteId],
  );
  return row.n;
}

function refusedOnName<T>(work: Promise<T>): Promise<T> {
  return work.catch((error) => {
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
      throw new SegmentRefusal("segment_exists");
    }
    throw error;
  });
}

/** Stores a new segment (the caller runs it in a transaction holding the site's row). */
export async function createSegment(
  tx: Queryable,
  siteId: string,
  segment: { name: string; filters: SegmentFilters },
): Promise<Segment> {
  await tx.query("select 1 from ingest.sites where site_id = $1 for update", [siteId]);
  if ((await countOf(tx, siteId)) >= MAX_SEGMENTS) {
    throw new SegmentRefusal("too_many_segments");
  }
  const taken = await tx.query("select 1 from ingest.segments where site_id = $1 and name = $2", [
    siteId,
    segment.name,
  ]);
  if (taken.length) throw new SegmentRefusal("segment_exists");
  const id = newSegmentId();
  await refusedOnName(tx.query(
    "insert into ingest.segments (site_id, id, name, filters) values ($1, $2, $3, $4::json)",
    [siteId, id, segment.name, JSON.stringify(segment.filters)],
  ));
  return { id, ...segment };
}

/** Replaces a segment's name and filters. */
export async function replaceSegment(
  tx: Queryable,
  siteId: string,
  segment: Segment,
): Promise<Segment> {
  const taken = await tx.query(
    "select 1 from ingest.segments where site_id = $1 and name = $2 and id <> $3",
    [siteId, segment.name, segment.id],
  );
  if (taken.length) throw new SegmentRefusal("segment_exists");
  const rows = await refusedOnName(tx.query(
    `update ingest.segments set name = $3, filters = $4::json, updated_at = now()
      where site_id = $1 and id = $2 returning id`,
    [siteId, segment.id, segment.name, JSON.stringify(segment.filters)],
  ));
  if (rows.length === 0) throw new SegmentRefusal("segment_not_found");
  return segment;
}

export async function deleteSegment(tx: Queryable, siteId: string, id: string): Promise<void> {
  const rows = await tx.query(
    "delete from ingest.segments where site_id = $1 and id = $2 returning id",
    [siteId, id],
  );
  if (rows.length === 0) throw new SegmentRefusal("segment_not_found");
}

/**
 * The manifest's segments, upserted by name: a segment of the same name gets
 * the manifest's filters (its id stays), a new name is added, others are
 * left as they are. Answers the counts of what changed.
 */
export async function importSegments(
  tx: Queryable,
  siteId: string,
  segments: readonly SegmentDef[],
): Promise<Record<string, number>> {
  if (segments.length === 0) return {};
  const stored = new Map((await listSegments(tx, siteId)).map((s) => [s.name, s]));
  let added = 0;
  let changed = 0;
  for (const segment of segments) {
    const before = stored.get(segment.name);
    if (before && JSON.stringify(before.filters) === JSON.stringify(segment.filters)) continue;
    if (before) {
      await tx.query(
        `update ingest.segments set filters = $3::json, updated_at = now()
          where site_id = $1 and id = $2`,
        [siteId, before.id, JSON.stringify(segment.filters)],
      );
      changed++;
    } else {
      await tx.query(
        "insert into ingest.segments (site_id, id, name, filters) values ($1, $2, $3, $4::json)",
        [siteId, newSegmentId(), segment.name, JSON.stringify(segment.filters)],
      );
      added++;
    }
  }
  if (stored.size + added > MAX_SEGMENTS) throw new SegmentRefusal("too_many_segments");
  return {
    ...(added ? { segmentsAdded: added } : {}),
    ...(changed ? { segmentsChanged: changed } : {}),
  };
}
