import { runServiceProcess } from "@avatar/runtime";
import { webhooksModule } from "./index.js";

await runServiceProcess(webhooksModule);
