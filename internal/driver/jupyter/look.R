# polyrepl's look inside IRkernel, which ignores user_expressions: the
# driver sends, as a silent execute_request, base::local({ vars.R; this;
# the call }) in a new environment whose parent is the base environment,
# so nothing is assigned in .GlobalEnv; silent, IRkernel prints nothing
# of it, keeps .Last.value and counts no execution. The answer is the
# JSON of the R worker's "vars" event, sent as a display_data of
# polyrepl's own MIME type, which the driver takes by its parent msg_id
# and never shows.

st <- new.env(parent = emptyenv())

# answer sends x as the look's JSON (jsonlite: IRkernel's own).
answer <- function(x) {
  text <- tryCatch(as.character(jsonlite::toJSON(x, auto_unbox = TRUE, digits = NA, null = "null", na = "null")),
                   error = function(e) paste0("{\"error\":\"the look's answer could not be written\",\"failed\":true}"))
  getOption("jupyter.base_display_func")(list("application/vnd.polyrepl.look+json" = text), NULL)
  invisible()
}

# cell_answer is the look a cell's result carries: the session's own
# names from their structure only, and the names sessions lists.
cell_answer <- function() {
  tryCatch({
    found <- vars_names(FALSE)
    o <- list(limit = 100L, width = 80L, all = FALSE, live = FALSE, timeout = 0)
    list(vars = vars_list(found, o), total = length(found$names),
         names = as.list(found$names[seq_len(min(length(found$names), 500L))]))
  }, error = function(e) list(error = paste0("the look failed: ", conditionMessage(e)), failed = TRUE),
  interrupt = function(e) list(error = "the look was interrupted", failed = TRUE))
}
