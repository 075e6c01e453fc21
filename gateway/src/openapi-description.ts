/** The description of `/openapi.json` (Markdown): what the route table cannot say (events, webhooks). */
export const API_DESCRIPTION = `
Avatar sessions: mint a session token with an API key, start it, and talk to the avatar over the event
socket at the start's \`ws_url\`.

## Event socket: \`session.turn_metrics\`

After each avatar turn (FULL) or utterance (LITE) the server sends one \`session.turn_metrics\` event;
it is also kept among the session's stored events.

| Field | Meaning |
|---|---|
| \`source_event_id\` | the client event the turn answered (\`avatar.say\`, \`agent.speak\`...), or null |
| \`turn_id\` | this turn's id |
| \`trigger\` | \`user_speech\`, \`opening_text\`, \`avatar.say\`, \`avatar.speak_response\`, \`avatar.repeat\`, \`avatar.speak_text\` (FULL); \`agent.speak\` or \`agent\` (LITE) |
| \`interrupted\` | the turn was cut short |
| \`started_at\` | the reference point, Unix ms: end of the user's speech, the client event's arrival, the first connect (opening text), or the utterance's first audio (LITE) |
| \`latency_ms.final_transcript\` | until the user's speech was recognized |
| \`latency_ms.first_llm_token\` | until the language model's first token |
| \`latency_ms.first_audio\` | until the turn's first audio played |
| \`latency_ms.first_mouth_open_frame\` | until the first video frame with the mouth open |

Every \`latency_ms\` value is milliseconds from \`started_at\`, non-decreasing in that order, and null
when the stage does not apply or was not reached (no video rendered, no speech recognized...).

## Webhooks

\`POST /v1/webhooks\` registers an endpoint (\`url\`, \`event_types\`, optional \`description\`) and answers
its signing \`secret\` once. Events: \`session.started\`, \`session.ended\` (\`end_reason\`, \`duration\`,
\`credits_used\`), \`session.transcript_ready\`, \`memory.created\`. Each is POSTed as
\`{"type", "timestamp", "data"}\` with the Standard Webhooks headers \`webhook-id\` (the same on every
retry: deduplicate on it), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\`
(\`v1,\` + base64 HMAC-SHA256 of \`id.timestamp.body\` keyed with the secret's base64 part). Any 2xx
answer is a delivery; anything else is retried with backoff for a day, then given up; an endpoint whose
deliveries fail for a day is disabled (\`status\` \`disabled\`, \`disabled_reason\`).
\`GET /v1/webhooks/{webhook_id}/deliveries\` is the delivery log. Targets must be public addresses.
`.trim();
