/**
 * The nbagent JupyterLab plugin: the side panel, its commands and its settings.
 */

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ICompletionProviderManager } from '@jupyterlab/completer';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { AgentSettings } from './api';
import { CompletionSettings, NbagentInlineProvider } from './completions';
import { startLiveNotebooks } from './liveNotebooks';
import { OpenContextTracker } from './openContext';
import { PanelModel } from './model';
import { AgentPanel, PANEL_ID } from './panel';
import { RemoteImageSanitizer } from './remoteImages';

const PLUGIN_ID = 'nbagent-labextension:plugin';
const COMPLETIONS_ID = 'nbagent-labextension:completions';

export const CommandIDs = {
  open: 'nbagent:open',
  newSession: 'nbagent:new-session',
  abort: 'nbagent:abort'
} as const;

const agentIcon = new LabIcon({
  name: 'nbagent:agent',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<path d="M12 2a2 2 0 0 1 2 2c0 .74-.4 1.39-1 1.73V7h5a3 3 0 0 1 3 3v8a3 3 0 0 1-3 3H6a3 3 0 0 1-3-3v-8a3 3 0 0 1 3-3h5V5.73A2 2 0 0 1 12 2zM8.5 12a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm7 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z"/>' +
    '</g></svg>'
});

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'The nbagent side panel: sessions, streamed answers, tools, todos and approvals.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [ICommandPalette, ISettingRegistry, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const model = new PanelModel();
    // The panel's own rendermime: the same renderers, with remote images kept from loading on their own.
    const safe = rendermime.clone({ sanitizer: new RemoteImageSanitizer(rendermime.sanitizer) });
    const panel = new AgentPanel(model, safe);
    panel.title.icon = agentIcon;
    panel.title.caption = 'nbagent';
    app.shell.add(panel, 'right', { rank: 500 });
    restorer?.add(panel, PANEL_ID);
    void model.start();
    model.openContext = new OpenContextTracker(app); // the chip: active notebook, cell, selection
    startLiveNotebooks(app); // the agent edits open notebooks through this tab when there is no RTC

    const reveal = () => {
      app.shell.activateById(PANEL_ID);
      requestAnimationFrame(() => panel.focusInput());
    };
    app.commands.addCommand(CommandIDs.open, {
      label: 'nbagent: Open the Agent Panel',
      icon: agentIcon,
      execute: reveal
    });
    app.commands.addCommand(CommandIDs.newSession, {
      label: 'nbagent: New Session',
      execute: async () => {
        await model.newSession();
        reveal();
      }
    });
    app.commands.addCommand(CommandIDs.abort, {
      label: 'nbagent: Abort the Turn (and clear the queue)',
      execute: () => model.abort()
    });
    for (const command of Object.values(CommandIDs)) {
      palette?.addItem({ command, category: 'nbagent' });
    }

    if (settingRegistry) {
      // The settings editor is the user's place for model, tool sets and approval mode;
      // the server applies them to sessions it opens from now on.
      void settingRegistry.load(PLUGIN_ID).then(settings => {
        // Only what the user set: a value left at the schema's default is null, the server's configured
        // default, so that the offline model keeps its small profile (its read tool set) and NBAGENT_*
        // settings apply. Sending the schema's defaults would name eight tool sets for every session.
        const push = () => void model.applySettings(userSettings(settings.user));
        settings.changed.connect(push);
        push();
        // Only when the user asks (the panel's "Keep as my defaults"): the panel's controls change the session alone.
        model.saveDefaults = async values => {
          for (const [key, value] of Object.entries(values)) {
            if (value !== undefined) {
              await settings.set(key, value as never);
            }
          }
        };
      });
    }
  }
};

/** The settings the user set in the registry, the others null (the server's configured defaults). */
export function userSettings(user: Record<string, unknown>): Partial<AgentSettings> {
  const pick = (key: string) => (user[key] === undefined ? null : user[key]);
  return { model: pick('model'), toolsets: pick('toolsets'), approval: pick('approval') } as unknown as Partial<AgentSettings>;
}

/** Inline completions through JupyterLab's inline completer (its keys accept, cycle and dismiss). */
const completions: JupyterFrontEndPlugin<void> = {
  id: COMPLETIONS_ID,
  description: 'Inline completions from your model, with the kernel\'s names, as JupyterLab ghost text.',
  autoStart: true,
  requires: [ICompletionProviderManager],
  optional: [ISettingRegistry],
  activate: (app: JupyterFrontEnd, manager: ICompletionProviderManager, settingRegistry: ISettingRegistry | null) => {
    const provider = new NbagentInlineProvider();
    manager.registerInlineProvider(provider);
    void settingRegistry?.load(COMPLETIONS_ID).then(settings => {
      const apply = () => provider.configureWith(settings.composite as unknown as Partial<CompletionSettings>);
      settings.changed.connect(apply);
      apply();
    });
  }
};

export default [plugin, completions];
