// Loads the widget's wasm; kept in a file (not inline) so strict CSPs need no 'unsafe-inline'.
import init from "/widget/pkg/concierge_widget.js";
init();
