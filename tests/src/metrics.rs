//! Reading a worker's Prometheus endpoint.

/// The text of `GET url` (an endpoint's `/metrics`).
pub async fn scrape(url: &str) -> String {
    reqwest::get(url)
        .await
        .expect("scraping the metrics endpoint")
        .text()
        .await
        .expect("reading the metrics")
}

/// The value of the sample of `name` whose labels are exactly `labels`, in any order.
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut labels = labels.to_vec();
    labels.sort();
    let labels = labels
        .iter()
        .map(|(key, value)| format!("{key}=\"{value}\""))
        .collect::<Vec<_>>()
        .join(",");
    let prefix = format!("{name}{{{labels}}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(|value| value.parse().expect("a sample's value is a number"))
}
