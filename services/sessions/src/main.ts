import { runServiceProcess } from "@avatar/runtime";
import { sessionsModule } from "./index.js";

await runServiceProcess(sessionsModule);
