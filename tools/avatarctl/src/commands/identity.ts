import { formatIdentitySet, generateIdentitySet, type ServiceName } from "@avatar/runtime";
import { type Command, defineCommand } from "../command.js";

const generate = defineCommand({
  group: "identity",
  name: "generate",
  summary: "Print a new set of service identity keys (offline) for the avatar-service-identity Secret",
  options: {},
  details: [
    "Prints env-file lines: one private key per process (gateway, tokens, ..., avatarctl) and",
    "public-keys, the line every service verifies its callers with. Make the Secret from them:",
    "  avatarctl identity generate > identity.env",
    "  kubectl -n avatar create secret generic avatar-service-identity --from-env-file=identity.env",
    "Each Deployment mounts only its own key; keep the avatarctl key for operator Jobs.",
  ],
  parse: () => ({}),
  services: (): ServiceName[] => [],
  async run(_input, { out }) {
    out.line(formatIdentitySet(generateIdentitySet()).trimEnd());
  },
});

export const identityCommands: Command[] = [generate];
