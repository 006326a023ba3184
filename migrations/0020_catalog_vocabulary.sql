-- A shop's catalog vocabulary (issue 48): the product names, brands, categories and models
-- learned from each knowledge document when it is indexed (`knowledge_documents.vocabulary`,
-- a JSON array of at most 120 short terms), and the site's merged set (`sites.catalog`, at
-- most 400), which comes with the site to every turn and feeds the `shop` classifier.
ALTER TABLE knowledge_documents ADD COLUMN vocabulary TEXT NOT NULL DEFAULT '[]';
ALTER TABLE sites ADD COLUMN catalog TEXT NOT NULL DEFAULT '[]';
