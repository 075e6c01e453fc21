import { runServiceProcess } from "@avatar/runtime";
import { agentsModule } from "./index.js";

await runServiceProcess(agentsModule);
