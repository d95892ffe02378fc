//! `baton agents check`: fetch and validate every card, show what was chosen, and print the
//! roster exactly as the model will see it; then connect to every `[[mcp]]` server and list the
//! tools the model will be offered.

use std::path::Path;
use std::process::ExitCode;

use baton_a2a::{AgentCheck, CardLimits, Registry};
use baton_config::Settings;
use baton_core::deployment_key::DeploymentKey;
use baton_core::display::one_line_capped;
use baton_mcp::McpServers;

/// `baton agents check`: prints each agent's card check, the roster and the MCP tools. Exit
/// code 1 when an agent is refused or the MCP servers would stop a worker.
pub async fn run(config: &Path) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    crate::logging::use_format(settings.log.format);
    // The check calls no agent, `self` included: a throwaway key stands in for the deployment's.
    let deployment = DeploymentKey::from_secret(&baton_a2a::push::new_token());
    let checks = Registry::check(&settings, &[], &deployment, CardLimits::default()).await;
    let push_receiver = settings.server.base_url.is_some();
    print!("{}", render_table(&checks, push_receiver));

    if settings.server.base_url.is_none() {
        println!("\nself: {}", baton_a2a::SELF_NOT_OFFERED);
    }
    print!("{}", render_operator_prompt(&settings));
    let (registry, refused) = Registry::from_checks(&settings.agent.id, checks);
    println!(
        "\nroster (as the model sees it):\n{}",
        registry.roster().text
    );

    let tools_offered = check_mcp_servers(&settings).await;
    if refused.is_empty() && tools_offered {
        return Ok(ExitCode::SUCCESS);
    }
    if refused.is_empty() {
        return Ok(ExitCode::FAILURE);
    }
    eprintln!("\nerror: {} agent(s) refused:", refused.len());
    for error in refused {
        eprintln!(
            "  {} [{}]: {}",
            error.agent(),
            error.code(),
            one_line_capped(&error.to_string(), ERROR_LINE)
        );
    }
    Ok(ExitCode::FAILURE)
}

/// The operator's instructions as the model reads them, and the sections of the system prompt
/// `[prompt]` changes.
fn render_operator_prompt(settings: &Settings) -> String {
    let mut text = match &settings.agent.instructions {
        Some(instructions) => format!("\ninstructions (as the model sees them):\n{instructions}\n"),
        None => "\ninstructions: none (set agent.instructions to say what this agent is for)\n"
            .to_string(),
    };
    for (verb, sections) in [
        ("replaced", &settings.prompt.replace),
        ("extended", &settings.prompt.extend),
    ] {
        if !sections.is_empty() {
            let names: Vec<&str> = sections.keys().map(String::as_str).collect();
            text.push_str(&format!(
                "system prompt sections {verb}: {}\n",
                names.join(", ")
            ));
        }
    }
    text
}

/// Connects to the `[[mcp]]` servers as a worker would and prints the tools the model will be
/// offered, or why the worker would refuse to start. False when it would.
async fn check_mcp_servers(settings: &Settings) -> bool {
    if settings.mcp.is_empty() {
        return true;
    }
    match McpServers::connect(&settings.mcp).await {
        Ok(servers) => {
            println!("\nMCP tools (offered beside Baton's own tools):");
            for tool in servers.tools() {
                let retries = if tool.retry_safe {
                    "read-only or idempotent: up to 3 attempts"
                } else {
                    "may change something: called once"
                };
                println!(
                    "  {} ({}; {retries}): {}",
                    tool.name,
                    tool.server,
                    one_line_capped(&tool.description, NAME_CELL)
                );
            }
            servers.close().await;
            true
        }
        Err(error) => {
            eprintln!("\nerror: {}", one_line_capped(&error, ERROR_LINE));
            false
        }
    }
}

/// The widest a card's text is shown: a card is a stranger's, so its name and interface are
/// shown on one line, escaped, and cut.
const NAME_CELL: usize = 60;
const INTERFACE_CELL: usize = 100;
const ERROR_LINE: usize = 500;

/// One row per agent: id, name, skill count, chosen interface, the watch `auto` picks, and
/// where the card came from; a refused agent shows its error code.
fn render_table(checks: &[AgentCheck], push_receiver: bool) -> String {
    let mut rows = vec![[
        "ID".to_string(),
        "NAME".into(),
        "SKILLS".into(),
        "INTERFACE".into(),
        "WATCH".into(),
        "CARD".into(),
    ]];
    for check in checks {
        rows.push(match &check.result {
            Ok(agent) => {
                let iface = agent.interface();
                [
                    check.id.clone(),
                    one_line_capped(&agent.card().name, NAME_CELL),
                    agent.card().skills.len().to_string(),
                    one_line_capped(
                        &format!(
                            "{} {} {}",
                            iface.protocol_binding, iface.protocol_version, iface.url
                        ),
                        INTERFACE_CELL,
                    ),
                    agent.watch(push_receiver).to_string(),
                    format!("{:?}", agent.source()).to_lowercase(),
                ]
            }
            Err(error) => [
                check.id.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                format!("refused: {}", error.code()),
            ],
        });
    }
    let widths: Vec<usize> = (0..6)
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            format!("{}\n", cells.join("  ").trim_end())
        })
        .collect()
}
