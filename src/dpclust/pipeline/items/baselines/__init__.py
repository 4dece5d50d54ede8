"""Items of the foundation: the non-private baselines `table` (with its sanity checks) and `figure`;
`common` holds both."""
