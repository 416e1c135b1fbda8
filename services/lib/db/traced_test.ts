import { describe, expect, it } from "vitest";
import { summarize } from "./traced.ts";

describe("summarize", () => {
  it("names the operation and the table of plain statements", () => {
    expect(summarize("select a from content_pages where site_id = $1")).toEqual({
      operation: "SELECT",
      table: "content_pages",
    });
    expect(summarize("\n  INSERT INTO events (a) values ($1)")).toEqual({
      operation: "INSERT",
      table: "events",
    });
    expect(summarize("update sites set name = $1")).toEqual({
      operation: "UPDATE",
      table: "sites",
    });
    expect(summarize("delete from sessions where x < $1")).toEqual({
      operation: "DELETE",
      table: "sessions",
    });
  });

  it("reads the main statement after common table expressions and comments", () => {
    expect(
      summarize(
        "-- why\nwith r as (select * from json_to_recordset($1)) insert into leads select * from r",
      ),
    ).toEqual({ operation: "INSERT", table: "leads" });
  });

  it("names a statement that writes in its CTEs and selects after them by its first write", () => {
    expect(
      summarize(
        `with won as (insert into ingest.event_ids (a) select a from json_to_recordset($2) r
           returning a), ins as (insert into ingest.events (a) select a from won returning *),
         first_of_type as (update ingest.event_types t set n = 1)
         select count(*) from ins`,
      ),
    ).toEqual({ operation: "INSERT", table: "ingest.event_ids" });
    expect(summarize("with r as (select 1) select * from r join t using (a)")).toEqual({
      operation: "SELECT",
      table: "r",
    });
  });

  it("keeps statements without a table to their operation", () => {
    expect(summarize("select 1")).toEqual({ operation: "SELECT" });
    expect(summarize("begin")).toEqual({ operation: "BEGIN" });
    expect(summarize("")).toEqual({ operation: "SQL" });
  });
});
