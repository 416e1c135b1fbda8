/** Auth-service's share links (auth.share_links) and each site's embed origins. */
import type { Database, Queryable } from "../lib/db/mod.ts";

export interface ShareLinkRecord {
  id: string;
  siteId: string;
  label: string | null;
  passwordHash: string | null;
  /** Unix ms, or null: never expires. */
  expiresAt: number | null;
  createdAt: number;
  /** Unix ms, or null: not revoked. */
  revokedAt: number | null;
}

type ShareRow = {
  id: string;
  site_id: string;
  label: string | null;
  password_hash: string | null;
  expires_ms: number | null;
  created_ms: number;
  revoked_ms: number | null;
};

const COLUMNS = `id, site_id, label, password_hash,
  floor(extract(epoch from expires_at) * 1000)::float8 as expires_ms,
  floor(extract(epoch from created_at) * 1000)::float8 as created_ms,
  floor(extract(epoch from revoked_at) * 1000)::float8 as revoked_ms`;

function recordOf(row: ShareRow): ShareLinkRecord {
  const ms = (value: number | null) => value === null ? null : Number(value);
  return {
    id: row.id,
    siteId: row.site_id,
    label: row.label,
    passwordHash: row.password_hash,
    expiresAt: ms(row.expires_ms),
    createdAt: Number(row.created_ms),
    revokedAt: ms(row.revoked_ms),
  };
}

export class ShareStore {
  constructor(private readonly db: Database) {}

  async link(id: string, q: Queryable = this.db): Promise<ShareLinkRecord | undefined> {
    const rows = await q.query<ShareRow>(
      `select ${COLUMNS} from auth.share_links where id = $1`,
      [id],
    );
    return rows[0] && recordOf(rows[0]);
  }

  /** The site's links, oldest first. */
  async links(siteId: string): Promise<ShareLinkRecord[]> {
    const rows = await this.db.query<ShareRow>(
      `select ${COLUMNS} from auth.share_links where site_id = $1 order by created_at, id`,
      [siteId],
    );
    return rows.map(recordOf);
  }

  /** Stores a new link; "no_site" when the site is not stored. */
  async create(
    link: Omit<ShareLinkRecord, "revokedAt">,
  ): Promise<"created" | "no_site"> {
    return await this.db.transaction(async (tx) => {
      const site = await tx.query("select 1 from auth.sites where site_id = $1 for share", [
        link.siteId,
      ]);
      if (!site.length) return "no_site";
      await tx.query(
        `insert into auth.share_links (id, site_id, label, password_hash, expires_at, created_at)
         values ($1, $2, $3, $4, to_timestamp($5::float8 / 1000), to_timestamp($6::float8 / 1000))`,
        [
          link.id,
          link.siteId,
          link.label,
          link.passwordHash,
          link.expiresAt,
          link.createdAt,
        ],
      );
      return "created";
    });
  }

  /** Marks a link revoked at `at` (Unix ms) unless it already is; the link as it was before. */
  async revoke(id: string, at: number): Promise<ShareLinkRecord | undefined> {
    return await this.db.transaction(async (tx) => {
      const rows = await tx.query<ShareRow>(
        `select ${COLUMNS} from auth.share_links where id = $1 for update`,
        [id],
      );
      if (!rows[0]) return undefined;
      const before = recordOf(rows[0]);
      if (before.revokedAt === null) {
        await tx.query(
          "update auth.share_links set revoked_at = to_timestamp($2::float8 / 1000) where id = $1",
          [id, at],
        );
      }
      return before;
    });
  }

  /** The ids of the site's links, revoked ones included. */
  async ids(siteId: string, q: Queryable = this.db): Promise<string[]> {
    const rows = await q.query<{ id: string }>(
      "select id from auth.share_links where site_id = $1 order by id",
      [siteId],
    );
    return rows.map((r) => r.id);
  }

  async embedOrigins(siteId: string, q: Queryable = this.db): Promise<string[]> {
    const rows = await q.query<{ embed_origins: string }>(
      "select embed_origins::text as embed_origins from auth.sites where site_id = $1",
      [siteId],
    );
    return rows[0] ? JSON.parse(rows[0].embed_origins) : [];
  }
}
