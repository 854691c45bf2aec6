-- What PostgreSQL writes for {{BATCH}} signed receives that each create a deal with a
-- known contact, as ONE statement with no reads first: the most favourable case
-- for the database. bench/inbound-floor.ts runs it with pgbench to measure how many
-- receives per second the server can store at all, with no service in front.
-- Rows per receive as the service writes them (receive.service.ts, insertDeals,
-- writeDealEvents, storeAnswersAndLog): the deal (all its indexes and the
-- deal_counters trigger), its first stage-history entry, its committee member,
-- two outbox events with payloads of the real size, the replay key with its
-- answer and the receive log entry; and one delivery job per batch. Less than the
-- service does: no replay-key claim or contact lookup before, no second write of
-- the deal's event sequence or of the replay key, one round trip in all. So the
-- rate it reaches is an upper bound for the service on the same server.
\set c random(1, {{CONTACTS}})
with input as materialized (
  select nextval(pg_get_serial_sequence('deals', 'id'))::integer as id, g, md5(random()::text) as h
  from generate_series(1, {{BATCH}}) as g
),
deal as (
  insert into deals (id, title, amount, currency, pipeline_id, stage_id, status, close_date, custom_fields, source_id, event_sequence)
  overriding system value
  select id, 'Floor deal ' || h, 1234.56, 'USD', {{PIPELINE_ID}}, {{STAGE_ID}}, 'open', date '2027-03-14',
    jsonb_build_object('campaign', 'c-' || g % 17, 'score', g % 100), '{{SOURCE_ID}}'::uuid, 2
  from input
  returning id
),
history as (
  insert into deal_stage_history (deal_id, from_stage_id, to_stage_id, changed_by_id, changed_by_name, changed_at)
  select id, null, {{STAGE_ID}}, null, 'floor', now() from input
),
member as (
  insert into deal_contacts (deal_id, contact_id, role, is_primary)
  select id, {{CONTACT_MIN}} + (:c + g) % {{CONTACTS}}, null, true from input
),
event as materialized (
  select gen_random_uuid() as event_id, e.event, e.sequence, input.id, input.h
  from input cross join (values ('service.deal.created', 1), ('service.deal.contact_added', 2)) as e (event, sequence)
),
stored as (
  insert into event_outbox (id, event, deal_id, sequence, payload)
  select event_id, event, id, sequence, jsonb_build_object('id', event_id, 'event', event, 'timestamp', now()::text, 'sequence', sequence,
    'deal', jsonb_build_object('id', id, 'title', 'Floor deal ' || h, 'amount', 1234.56, 'currency', 'USD', 'status', 'open',
      'stage', jsonb_build_object('id', {{STAGE_ID}}, 'name', 'Qualification', 'type', 'open'),
      'pipeline', jsonb_build_object('id', {{PIPELINE_ID}}, 'name', 'Sales'), 'owner', null, 'closeDate', '2027-03-14'),
    'changed_by', jsonb_build_object('id', null, 'name', 'floor'), 'source', jsonb_build_object('id', '{{SOURCE_ID}}', 'name', 'floor'))
  from event
  returning id
),
replay as (
  insert into inbound_idempotency (source_id, key, status, response)
  select '{{SOURCE_ID}}'::uuid, 'body:' || h || h, 200,
    jsonb_build_object('success', true, 'created', true, 'deal', jsonb_build_object('id', id), 'contact', jsonb_build_object('id', 1, 'created', false))
  from input
),
log as (
  insert into inbound_receive_log (source_id, status, outcome, deal_id) select '{{SOURCE_ID}}'::uuid, 200, 'created', id from input
)
select graphile_worker.add_job('deliver_event', json_build_object('eventIds', json_agg(id::text))) from stored;
