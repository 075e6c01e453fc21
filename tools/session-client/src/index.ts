export { type ConversationOptions, runConversation } from "./conversation.js";
export { EventSocket, type ReceivedEvent } from "./event-socket.js";
export { tone } from "./tone.js";
