package api

// PathGlance describes one session as cheaply as the daemon can: its
// state, the running cell and the question it asks, its names; not its
// memory, process or version (api.SessionInfo with those left empty). A
// console asks it while a cell runs, to show the question's prompt and to
// complete names, so it costs no /proc scan and tells the asker nothing
// (no death is marked as told).
const PathGlance = "/v1/sessions/{name}/glance"
