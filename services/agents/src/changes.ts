/**
 * Announces that a stored value which other services cache changed (runtime `changeAnnouncer`: the tokens
 * service caches what a mint reads). An update or a delete awaits it before it answers, so that the
 * caller's next mint does not meet the old value. It never rejects.
 */
export type Changed = (id: string) => Promise<void>;

/** One announcer per kind of value, named as runtime's `cacheInvalidations` names their subjects. */
export interface AgentsChanges {
  contexts?: Changed;
  voiceAgents?: Changed;
  llmConfigurations?: Changed;
  secrets?: Changed;
  embeds?: Changed;
}

/** Where no process caches the value (a test of the service alone). */
export const unannounced: Changed = async () => {};
