-- On a restored database, before any service runs on it: marks delivered
-- the webhook deliveries that the installation the backup came from made
-- after the backup, so the restored outboxes do not send them again. Reads
-- on stdin the NDJSON that `deno task admin webhooks log SITE_ID --since ISO`
-- printed there (one site's or several sites' lines, in any order); an
-- attempt answered 2xx marks its message's delivery to that URL. Prints the
-- deliveries marked in each schema (docs/upgrades.md, "Restoring"):
--
--   psql "$RESTORED_URL" -v ON_ERROR_STOP=1 -f deploy/restore/webhooks_sent.sql < webhooks-sent.ndjson
begin;
create temp table sent_log (line text) on commit drop;
-- One line a row, whatever it holds: neither delimiter nor quote occurs in JSON text.
\copy sent_log from pstdin with (format csv, delimiter E'\x01', quote E'\x02')
create temp table sent on commit drop as
  select distinct j ->> 'id' as id, j ->> 'url' as url
    from (select line::json as j from sent_log where btrim(line) <> '') as lines
   where (j ->> 'status')::int between 200 and 299;
update content.webhook_deliveries d
   set state = 'delivered', lease = null, lease_until = null
  from sent
 where d.message_id = sent.id and d.url = sent.url and d.state <> 'delivered';
update ingest.webhook_deliveries d
   set state = 'delivered', lease = null, lease_until = null
  from sent
 where d.message_id = sent.id and d.url = sent.url and d.state <> 'delivered';
commit;
