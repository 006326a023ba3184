pub(crate) mod assistant;
