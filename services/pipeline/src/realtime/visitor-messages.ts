/**
 * What an embed's visitor reads in `error` and `warning` events: the event's type is kept (the page
 * may act on it), its message is a fixed sentence for a visitor. The operator's text (which names
 * providers and configuration, e.g. "vendorE speech synthesis is not configured on this service") goes
 * to the session's log only.
 */
export const VISITOR_ERROR = "Sorry, that did not work. Please try again.";
export const VISITOR_WARNING =
  "The conversation goes on, though not everything works as it should right now.";
