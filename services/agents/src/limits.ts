/** Sizes the service accepts (the gateway's request schemas use the same numbers). */
export const limits = {
  contextName: 255,
  prompt: 100_000,
  openingText: 10_000,
  links: 100,
  linkUrl: 2083,
  linkFaq: 10_000,
  agentName: 255,
  agentId: 255,
  secretName: 255,
  /** Provider keys are short; service-account documents can be a few kilobytes. */
  secretValue: 16_384,
  llmDisplayName: 255,
  llmModelName: 255,
  baseUrl: 2083,
} as const;
