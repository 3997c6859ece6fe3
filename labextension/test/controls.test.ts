import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { modelOptions, SessionControls } from '../src/controls';
import { PanelModel } from '../src/model';
import { toolsetChoices } from '../src/settingsTab';

describe("the session's controls", () => {
  it('offer the current model even when no list names it, and no name twice', () => {
    expect(modelOptions('gpt-4.1', ['gpt-4.1-mini', 'gpt-4.1'])).toEqual(['gpt-4.1-mini', 'gpt-4.1']);
    expect(modelOptions('my-local', ['gpt-4.1-mini'])).toEqual(['my-local', 'gpt-4.1-mini']);
    expect(modelOptions('', undefined)).toEqual([]);
  });

  it('offer every available tool set and the ones a session has on (an MCP server\'s too)', () => {
    expect(toolsetChoices(['core', 'mcp:time'], ['core', 'git'])).toEqual(['core', 'git', 'mcp:time']);
  });

  it('say when the offline model answers, and only then', () => {
    const model = new PanelModel();
    model.state = { ...model.state, settings: { model: 'smollm2-135m-instruct', approval: 'ask', offline: true } };
    const offline = renderToStaticMarkup(React.createElement(SessionControls, { model }));
    expect(offline).toContain('class="jp-nbagent-offline-badge" role="note"');
    expect(offline).toContain('offline model');
    model.state = { ...model.state, settings: { model: 'gpt-4.1-mini', approval: 'ask' } };
    expect(renderToStaticMarkup(React.createElement(SessionControls, { model }))).not.toContain('offline');
  });

  it('show the current model and approval mode, labelled, and a hostile model name as text', () => {
    const model = new PanelModel();
    model.state = { ...model.state, settings: { model: '<img src=x onerror=alert(1)>', approval: 'read-only' } };
    model.models = { models: ['gpt-4.1-mini'], endpoint: 'https://api.openai.com/v1', problem: null };
    const html = renderToStaticMarkup(React.createElement(SessionControls, { model }));
    expect(html).toContain('<span class="jp-nbagent-control-label">Model</span>');
    expect(html).toContain('data-mode="read-only"');
    expect(html).toMatch(/<option value="read-only" selected="">read-only<\/option>/);
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
